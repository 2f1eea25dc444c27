/**
 * requirements §3.3 "Request outcome by scenario", every row, over the live WebSocket of the real example
 * app: Better Auth sign-up, sign-out and admin endpoints over HTTP, and a {@link BackendClient}
 * whose `fetchToken` calls `GET /api/auth/backend/token` with the user's cookie jar.
 *
 * JWT expiry: the example issues 900 s tokens. The rows with an expired JWT move the process clock
 * (`vi.useFakeTimers({ toFake: ["Date"] })`; timers stay real): server, Better Auth and client
 * share this process, so the server's expiry sweep, the JWT verifier, the session check and the
 * token endpoint all see the same later time, exactly as if the time had passed. The server runs
 * with its idle timeout off: a 16-minute jump would otherwise close the socket as idle and the
 * client would come back through a reconnect instead of the auth-error path under test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { api } from "../../examples/app/app.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { closeClients, liveClient, watch } from "../helpers/live-client.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;
let n = 0;
const email = () => `live${++n}@example.com`;

beforeAll(async () => {
  app = await startExampleApp({ sync: { sweepIntervalMs: 50, idleTimeoutMs: 0 } });
});
afterEach(() => {
  closeClients();
  vi.useRealTimers();
});
afterAll(() => app?.close());

const authErrors = (received: any[]) => received.filter((m) => m.type === "auth_error");

/** A signed-up user with a live client subscribed to `users:me` and `messages:list`, both loaded. */
async function signedInClient() {
  const user = await app.signUp(email());
  const live = liveClient(app.url, user.browser);
  const me = watch(live.client, api.users.me);
  const list = watch(live.client, api.messages.list);
  await eventually(() => expect(me.last()).toMatchObject({ _id: user.userId }));
  await eventually(() => expect(list.values.length).toBeGreaterThan(0));
  expect(live.client.isAuthenticated).toBe(true);
  return { user, live, me, list };
}

/** The client reported signed-out after a refused refresh, and its live queries were stopped. */
async function expectSignedOut(
  live: ReturnType<typeof liveClient>,
  watches: ReturnType<typeof watch>[],
  refreshStatus: number,
): Promise<void> {
  await eventually(() => expect(live.authChanges).toEqual([true, false]));
  expect(live.client.isAuthenticated).toBe(false);
  expect(live.tokenStatuses.at(-1)).toBe(refreshStatus);
  for (const w of watches) expect(w.errors.map((e) => e.code)).toContain(authErrors(live.received)[0].code);
}

/**
 * `write` produces no update on this client, whose live queries were stopped. The barrier: a new
 * subscription (the public user count) on the same connection must see a later write (a sign-up);
 * messages are ordered, so any update `write` caused would have arrived before the barrier's.
 */
async function expectNoUpdatesFrom(live: ReturnType<typeof liveClient>, write: () => Promise<unknown>) {
  const count = watch(live.client, api.users.count);
  await eventually(() => expect(count.values).toHaveLength(1));
  const before = count.last() as number;
  const mark = live.received.length;
  await write();
  await app.signUp(email());
  await eventually(() => expect(count.last()).toBe(before + 1));
  const updates = live.received.slice(mark).filter((m) => m.type === "update");
  const barrier = updates.find((m) => m.value === before + 1);
  expect(updates).toEqual([barrier]);
  count.stop();
}

describe("requirements §3.3 over the WebSocket", () => {
  it("normal: the subscription gets the user and live changes to it", async () => {
    const { user, me } = await signedInClient();
    expect(me.last()).toMatchObject({ _id: user.userId, email: `live${n}@example.com` });
    await app.backend.write((db) => db.patch("user", user.userId, { name: "Renamed" }));
    await eventually(() => expect(me.last()).toMatchObject({ name: "Renamed" }));
  });

  it("user signs out: auth error pushed, the refresh gets 401, signed out and queries stopped", async () => {
    const { user, live, me, list } = await signedInClient();
    const out = await user.browser.post("/api/auth/sign-out", {});
    expect(out.status).toBe(200);
    await eventually(() => expect(authErrors(live.received)).toMatchObject([{ code: "UNAUTHORIZED" }]));
    await expectSignedOut(live, [me, list], 401);
    // The client holds no queries any more: messages posted by others reach nobody here.
    const other = await app.signUp(email());
    await expectNoUpdatesFrom(live, () =>
      app.call("mutation", "messages:send", { body: "after sign-out" }, other.token),
    );
    expect(list.values.flat().map((m: any) => m.body)).not.toContain("after sign-out");
  });

  it("administrator revokes the session: auth error pushed at once, then signed out", async () => {
    const adminEmail = email();
    const admin = await app.signUp(adminEmail);
    await app.makeAdmin(adminEmail);
    const { user, live, me, list } = await signedInClient();
    const session = await app.backend.read((db) =>
      db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", user.userId))
        .first(),
    );
    const revoke = await admin.browser.post("/api/auth/admin/revoke-user-session", {
      sessionToken: session!.token,
    });
    expect(revoke.status).toBe(200);
    // Nothing was sent to the victim's browser: the push is the only way it learns.
    await eventually(() => expect(authErrors(live.received)).toMatchObject([{ code: "UNAUTHORIZED" }]));
    await expectSignedOut(live, [me, list], 401);
  });

  it("JWT expired, session valid: the server ends the token, the client refreshes it and data keeps flowing", async () => {
    const { user, live, list } = await signedInClient();
    const firstToken = user.browser.jar.get("service-auth.jwt");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 16 * 60 * 1000 });
    await eventually(() =>
      expect(authErrors(live.received)).toMatchObject([{ code: "UNAUTHORIZED", message: "Token expired" }]),
    );
    // One forced refresh through the token endpoint, accepted by the server.
    await eventually(() =>
      expect(live.received.filter((m) => m.type === "authenticated")).toMatchObject([
        { authenticated: true },
      ]),
    );
    expect(live.tokenStatuses.at(-1)).toBe(200);
    expect(user.browser.jar.get("service-auth.jwt")).not.toBe(firstToken);
    // Data keeps flowing: another user's message reaches the restored subscription.
    const other = await app.signUp(email());
    const res = await app.call("mutation", "messages:send", { body: "still live" }, other.token);
    expect(res.status).toBe(200);
    await eventually(() => expect(list.last().map((m: any) => m.body)).toContain("still live"));
    expect(live.authChanges).toEqual([true]);
    expect(live.client.isAuthenticated).toBe(true);
    expect(list.errors).toEqual([]);
  });

  it("JWT expired, session expired: the refresh gets 401, signed out", async () => {
    const { live, me, list } = await signedInClient();
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 31 * 24 * 60 * 60 * 1000 });
    await eventually(() => expect(authErrors(live.received)).toMatchObject([{ code: "UNAUTHORIZED" }]));
    await expectSignedOut(live, [me, list], 401);
  });

  it("JWT valid, session expired: the server pushes an auth error, then signed out", async () => {
    const { user, live, me, list } = await signedInClient();
    await app.backend.write(async (db) => {
      const session = await db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", user.userId))
        .first();
      await db.patch(session!._id, { expiresAt: Date.now() - 1000 });
    });
    await eventually(() =>
      expect(authErrors(live.received)).toMatchObject([{ code: "UNAUTHORIZED", message: "Session expired" }]),
    );
    await expectSignedOut(live, [me, list], 401);
  });

  it("user banned: ACCOUNT_BANNED pushed, then signed out", async () => {
    const adminEmail = email();
    const admin = await app.signUp(adminEmail);
    await app.makeAdmin(adminEmail);
    const { user, live, me, list } = await signedInClient();
    const ban = await admin.browser.post("/api/auth/admin/ban-user", {
      userId: user.userId,
      banReason: "spam",
    });
    expect(ban.status).toBe(200);
    await eventually(() => expect(authErrors(live.received)).toMatchObject([{ code: "ACCOUNT_BANNED" }]));
    expect(authErrors(live.received)[0].message).toMatch(/banned/i);
    await expectSignedOut(live, [me, list], 401);
  });
});
