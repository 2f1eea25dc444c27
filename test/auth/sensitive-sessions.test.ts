/**
 * requirements §5.4, sensitive operations: in the example app changing the password, deleting the account
 * and changing a role run Better Auth's fresh-session middleware (`freshSessionFor`,
 * `session.freshAge` one day). A session last created or refreshed longer ago than that is
 * refused with 403 `SESSION_NOT_FRESH` and changes nothing; a fresh sign-in is accepted.
 * "Stale" is made by moving the session's timestamps back two days, not by waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
let app: ExampleApp;
let n = 0;
const newEmail = (what: string) => `${what}${++n}@example.com`;

beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(async () => {
  await app?.close();
});

/** Makes `browser`'s session two days old (created and last refreshed then), past `freshAge`. */
async function makeStale(browser: Browser): Promise<void> {
  const session = await browser.get("/api/auth/get-session");
  const id = session.body.session.id as string;
  const then = Date.now() - 2 * DAY_MS;
  await app.backend.write((db) => db.patch(id, { createdAt: then, updatedAt: then }));
}

/** A new browser signed in with a password: a fresh session. */
async function signIn(email: string, password = PASSWORD): Promise<Browser> {
  const browser = app.browser();
  const res = await browser.post("/api/auth/sign-in/email", { email, password });
  expect(res.status, res.text).toBe(200);
  return browser;
}

const notFresh = { code: "SESSION_NOT_FRESH", message: "Sign in again to do this: the session is not fresh" };

describe("sensitive operations need a fresh session", () => {
  it("change password: refused on a stale session, accepted after signing in again", async () => {
    const email = newEmail("pw");
    const { browser, token } = await app.signUp(email);
    await makeStale(browser);
    const newPassword = "another good passphrase";

    const stale = await browser.post("/api/auth/change-password", { currentPassword: PASSWORD, newPassword });
    expect(stale.status).toBe(403);
    expect(stale.body).toMatchObject(notFresh);
    // Only the sensitive operation needs freshness: the stale session still reads.
    expect((await browser.get("/api/auth/get-session")).body.user.email).toBe(email);
    expect((await app.call("query", "users:me", {}, token)).status).toBe(200);

    const fresh = await signIn(email);
    const changed = await fresh.post("/api/auth/change-password", { currentPassword: PASSWORD, newPassword });
    expect(changed.status, changed.text).toBe(200);
    await signIn(email, newPassword);
  });

  it("the password is unchanged after the refusal", async () => {
    const email = newEmail("unchanged");
    const { browser } = await app.signUp(email);
    await makeStale(browser);
    await browser.post("/api/auth/change-password", {
      currentPassword: PASSWORD,
      newPassword: "not taken at all",
    });
    await signIn(email, PASSWORD);
    expect(
      (await app.browser().post("/api/auth/sign-in/email", { email, password: "not taken at all" })).status,
    ).toBe(401);
  });

  it("delete account: refused on a stale session (the user stays), accepted on a fresh one", async () => {
    const email = newEmail("delete");
    const { browser } = await app.signUp(email);
    await makeStale(browser);
    const stale = await browser.post("/api/auth/delete-user", {});
    expect(stale.status).toBe(403);
    expect(stale.body).toMatchObject(notFresh);
    await signIn(email);

    const fresh = await signIn(email);
    const deleted = await fresh.post("/api/auth/delete-user", { password: PASSWORD });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await app.browser().post("/api/auth/sign-in/email", { email, password: PASSWORD })).status).toBe(
      401,
    );
  });

  it("set role: an administrator's stale session is refused (the role stays), a fresh one sets it", async () => {
    const adminEmail = newEmail("admin");
    const { browser: admin } = await app.signUp(adminEmail);
    await app.makeAdmin(adminEmail);
    const { userId, token } = await app.signUp(newEmail("member"));
    const roleOf = async () => (await app.call("query", "users:me", {}, token)).body.value.role;
    expect(await roleOf()).toBe("user");

    await makeStale(admin);
    const stale = await admin.post("/api/auth/admin/set-role", { userId, role: "admin" });
    expect(stale.status).toBe(403);
    expect(stale.body).toMatchObject(notFresh);
    expect(await roleOf()).toBe("user");

    const fresh = await signIn(adminEmail);
    const set = await fresh.post("/api/auth/admin/set-role", { userId, role: "admin" });
    expect(set.status, set.text).toBe(200);
    expect(await roleOf()).toBe("admin");
  });

  it("without a session the sensitive endpoints answer 401, not 500", async () => {
    for (const path of ["/api/auth/change-password", "/api/auth/delete-user", "/api/auth/admin/set-role"]) {
      const res = await app.browser().post(path, {});
      expect(res.status, path).toBe(401);
    }
  });
});
