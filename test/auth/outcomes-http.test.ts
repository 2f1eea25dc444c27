/**
 * requirements §3.3 "Request outcome by scenario", every row, through the real HTTP server of the
 * example app: Better Auth sign-up/in/out, the token endpoint, admin endpoints, and protected
 * functions called with the JWT as a bearer token.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
let n = 0;
const email = () => `user${++n}@example.com`;

beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(async () => {
  await app.close();
});
afterEach(() => {
  vi.useRealTimers();
});

const me = (token?: string | null) => app.call("query", "users:me", {}, token);

describe("requirements §3.3 over HTTP", () => {
  it("normal: valid JWT and valid session → 200", async () => {
    const address = email();
    const { token, userId } = await app.signUp(address);
    const res = await me(token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "success", value: { _id: userId, email: address } });
  });

  it("user signs out: session deleted, JWT cookie cleared with Max-Age=0, next request 401", async () => {
    const { browser, token } = await app.signUp(email());
    // Warm the server's per-token identity cache: sign-out must still apply on the next request.
    expect((await me(token)).status).toBe(200);
    const out = await browser.post("/api/auth/sign-out", {});
    expect(out.status).toBe(200);
    const cleared = browser.jar.lastSetCookies.find((c) => c.startsWith("service-auth.jwt="));
    expect(cleared).toMatch(/Max-Age=0/i);
    expect(browser.jar.get("service-auth.jwt")).toBeUndefined();
    // The old JWT is still cryptographically valid, but its session is gone.
    const res = await me(token);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
    // The client's refresh attempt gets 401 too, so it redirects to login.
    expect((await browser.token()).status).toBe(401);
  });

  it("administrator revokes a session: only the record goes, the JWT stays but gets 401", async () => {
    const adminEmail = email();
    const admin = await app.signUp(adminEmail);
    await app.makeAdmin(adminEmail);
    const victim = await app.signUp(email());
    expect((await me(victim.token)).status).toBe(200);
    const session = await app.backend.read((db) =>
      db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", victim.userId))
        .first(),
    );
    expect(session).not.toBeNull();

    const revoke = await admin.browser.post("/api/auth/admin/revoke-user-session", {
      sessionToken: session!.token,
    });
    expect(revoke.status).toBe(200);
    expect(await app.backend.read((db) => db.get("session", session!._id))).toBeNull();
    // The victim's cookie is untouched (nobody told their browser) …
    expect(victim.browser.jar.get("service-auth.jwt")).toBe(victim.token);
    // … but useless.
    expect((await me(victim.token)).status).toBe(401);
    expect((await victim.browser.token()).status).toBe(401);
  });

  it("a non-administrator cannot revoke sessions", async () => {
    const user = await app.signUp(email());
    const res = await user.browser.post("/api/auth/admin/revoke-user-session", { sessionToken: "anything" });
    expect(res.status).toBe(403);
  });

  it("JWT expired, session valid: the token call refreshes it, then 200", async () => {
    const { browser, token } = await app.signUp(email());
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 16 * 60 * 1000 });
    const expired = await me(token);
    expect(expired.status).toBe(401);
    expect(expired.body.message).toMatch(/expired/i);
    const refreshed = await browser.token();
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token).not.toBe(token);
    expect(browser.jar.get("service-auth.jwt")).toBe(refreshed.body.token);
    expect((await me(refreshed.body.token)).status).toBe(200);
  });

  it("JWT expired, session expired: 401 and the refresh is refused (redirect to login)", async () => {
    const { browser, token } = await app.signUp(email());
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 31 * 24 * 60 * 60 * 1000 });
    expect((await me(token)).status).toBe(401);
    expect((await browser.token()).status).toBe(401);
  });

  it("JWT valid, session expired: 401 on the next request", async () => {
    const { token, userId } = await app.signUp(email());
    expect((await me(token)).status).toBe(200);
    await app.backend.write(async (db) => {
      const session = await db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", userId))
        .first();
      await db.patch(session!._id, { expiresAt: Date.now() - 1000 });
    });
    const res = await me(token);
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/expired/i);
  });

  it("user banned: 403 with an account-banned message, also after the ban deleted the sessions", async () => {
    const adminEmail = email();
    const admin = await app.signUp(adminEmail);
    await app.makeAdmin(adminEmail);
    const victimEmail = email();
    const victim = await app.signUp(victimEmail);
    expect((await me(victim.token)).status).toBe(200);

    const ban = await admin.browser.post("/api/auth/admin/ban-user", {
      userId: victim.userId,
      banReason: "spam",
    });
    expect(ban.status).toBe(200);
    const sessions = await app.backend.read((db) =>
      db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", victim.userId))
        .collect(),
    );
    expect(sessions).toEqual([]);

    const res = await me(victim.token);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("ACCOUNT_BANNED");
    expect(res.body.message).toMatch(/banned/i);
    // Signing in again is refused by the admin plugin.
    const signIn = await app
      .browser()
      .post("/api/auth/sign-in/email", { email: victimEmail, password: "correct horse battery" });
    expect(signIn.status).toBe(403);
  });

  it("banned with a live session (ban set directly): token endpoint and functions answer 403", async () => {
    const { browser, token, userId } = await app.signUp(email());
    await app.backend.write((db) => db.patch("user", userId, { banned: true }));
    expect((await me(token)).status).toBe(403);
    const refresh = await browser.token();
    expect(refresh.status).toBe(403);
    expect(refresh.body.code).toBe("ACCOUNT_BANNED");
  });

  it("a ban until a future time blocks with 403 until banExpires passes, then no longer", async () => {
    const { browser, token, userId } = await app.signUp(email());
    const banExpires = Date.now() + 5 * 60 * 1000;
    await app.backend.write((db) => db.patch("user", userId, { banned: true, banExpires }));
    const banned = await me(token);
    expect(banned.status).toBe(403);
    expect(banned.body.code).toBe("ACCOUNT_BANNED");
    const refresh = await browser.token();
    expect(refresh.status).toBe(403);
    expect(refresh.body.code).toBe("ACCOUNT_BANNED");
    // A minute after the ban ends (6 min from now): the JWT (15 min) and the session are still valid.
    vi.useFakeTimers({ toFake: ["Date"], now: banExpires + 60 * 1000 });
    expect((await me(token)).status).toBe(200);
  });

  it("an expired ban (banExpires in the past) no longer blocks", async () => {
    const { token, userId } = await app.signUp(email());
    await app.backend.write((db) =>
      db.patch("user", userId, { banned: true, banExpires: Date.now() - 1000 }),
    );
    expect((await me(token)).status).toBe(200);
  });

  it("no token: public functions work, protected ones raise UNAUTHORIZED", async () => {
    const count = await app.call("query", "users:count");
    expect(count.status).toBe(200);
    expect(typeof count.body.value).toBe("number");
    const res = await me(null);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
  });

  it("a presented but invalid token is 401 even for a public function", async () => {
    const res = await app.call("query", "users:count", {}, "not.a.jwt");
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHORIZED");
  });
});
