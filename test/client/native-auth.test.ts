// @vitest-environment node
/**
 * The client of a native app or a Node process (issue 28 item 2), in plain Node with no DOM:
 * `NativeAuth` signs in through the cookie header bridge (no cookie jar, no `document`, no
 * `localStorage`) with an app-supplied async storage (as Expo SecureStore is), and a
 * `BackendClient` on the `ws` WebSocket runs live queries on the real example app through
 * sign-in, token refresh, a restart from storage, revocation and sign-out.
 *
 * The token refresh moves the process clock past the JWT's expiry (`vi.useFakeTimers({ toFake:
 * ["Date"] })`, timers stay real), as test/live/outcomes-ws.test.ts does: server and client share
 * this process, so both see the later time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { api } from "../../examples/app/app.ts";
import {
  BackendClient,
  memoryStorage,
  NativeAuth,
  NativeAuthError,
  type TokenStorage,
} from "../../src/client/index.ts";
import { applySetCookie, splitSetCookie } from "../../src/client/native-auth.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { watch } from "../helpers/live-client.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;
let n = 0;
const email = () => `native${++n}@example.com`;
const clients: BackendClient[] = [];

beforeAll(async () => {
  app = await startExampleApp({ sync: { sweepIntervalMs: 50, idleTimeoutMs: 0 } });
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  vi.useRealTimers();
});
afterAll(() => app?.close());

/** Async storage, as Expo SecureStore is, that records every write. */
function appStorage(): TokenStorage & { items: Map<string, string>; writes: number } {
  const items = new Map<string, string>();
  const s = {
    items,
    writes: 0,
    getItem: async (key: string) => items.get(key) ?? null,
    setItem: async (key: string, value: string) => {
      s.writes++;
      items.set(key, value);
    },
    removeItem: async (key: string) => {
      items.delete(key);
    },
  };
  return s;
}

/** A client on the `ws` WebSocket recording every server message and isAuthenticated change. */
function liveClient(auth: NativeAuth) {
  const received: any[] = [];
  class RecordingWebSocket extends WebSocket {
    constructor(address: string) {
      super(address);
      this.on("message", (data) => received.push(JSON.parse(String(data))));
    }
  }
  const client = new BackendClient(app.url, {
    WebSocket: RecordingWebSocket as any,
    reconnectInitialDelayMs: 50,
    reconnectMaxDelayMs: 300,
  });
  clients.push(client);
  const changes: boolean[] = [];
  client.setAuth(auth.fetchToken, (v) => changes.push(v));
  return { client, received, changes, authErrors: () => received.filter((m) => m.type === "auth_error") };
}

/** A signed-up user whose `NativeAuth` holds the session and whose live client sees them. */
async function signedIn(storage: TokenStorage = memoryStorage()) {
  const address = email();
  const auth = new NativeAuth(app.url, { storage });
  const { user } = await auth.signUpEmail({ email: address, password: PASSWORD, name: "Native" });
  const live = liveClient(auth);
  const me = watch(live.client, api.users.me);
  await eventually(() => expect(me.last()).toMatchObject({ _id: user.id }));
  expect(live.changes).toEqual([true]);
  return { address, auth, user, live, me };
}

describe("in plain Node", () => {
  it("has no DOM: no document, no window, no localStorage", () => {
    expect(typeof (globalThis as any).document).toBe("undefined");
    expect(typeof (globalThis as any).window).toBe("undefined");
    expect(typeof (globalThis as any).localStorage).toBe("undefined");
    expect(
      typeof (globalThis as any).navigator?.userAgent === "string" &&
        /jsdom/i.test((globalThis as any).navigator.userAgent),
    ).toBe(false);
  });
});

describe("NativeAuth with BackendClient on the example app", () => {
  it("signs in with email and password into app storage, then live queries run as the user", async () => {
    const storage = appStorage();
    const address = email();
    const signUp = new NativeAuth(app.url, { storage: appStorage() });
    await signUp.signUpEmail({ email: address, password: PASSWORD, name: "Native" });

    const auth = new NativeAuth(app.url, { storage });
    expect(await auth.hasSession()).toBe(false);
    expect(await auth.fetchToken({ forceRefresh: false })).toBeNull();
    await expect(auth.signInEmail({ email: address, password: "wrong password!!" })).rejects.toBeInstanceOf(
      NativeAuthError,
    );
    const { user } = await auth.signInEmail({ email: address, password: PASSWORD });
    expect(await auth.hasSession()).toBe(true);
    const stored = JSON.parse(storage.items.get("service-auth.cookies")!);
    expect(Object.keys(stored)).toContain("service-auth.session_token");
    expect((await auth.getSession())?.user.id).toBe(user.id);

    const live = liveClient(auth);
    const me = watch(live.client, api.users.me);
    const list = watch(live.client, api.messages.list);
    await eventually(() => expect(me.last()).toMatchObject({ _id: user.id, email: address }));
    await live.client.mutation(api.messages.send, { body: "from node" });
    await eventually(() => expect(list.last().map((m: any) => m.body)).toContain("from node"));
    expect(live.changes).toEqual([true]);
    expect(live.authErrors()).toEqual([]);

    // An app restart: a new NativeAuth on the same storage is still signed in, without a sign-in.
    const restarted = new NativeAuth(app.url, { storage });
    const token = await restarted.fetchToken({ forceRefresh: false });
    expect((await app.call("query", "users:me", {}, token)).body.value).toMatchObject({ _id: user.id });
  });

  it("refreshes an expired JWT through the stored session and data keeps flowing", async () => {
    const { live, user } = await signedIn(appStorage());
    const list = watch(live.client, api.messages.list);
    await eventually(() => expect(list.values.length).toBe(1));
    expect(live.received.find((m) => m.type === "connected")).toMatchObject({ authenticated: true });
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 16 * 60 * 1000 });
    await eventually(() =>
      expect(live.authErrors()).toMatchObject([{ code: "UNAUTHORIZED", message: "Token expired" }]),
    );
    await eventually(() =>
      expect(live.received.filter((m) => m.type === "authenticated")).toMatchObject([
        { authenticated: true },
      ]),
    );
    await live.client.mutation(api.messages.send, { body: "after refresh" });
    await eventually(() => expect(list.last().map((m: any) => m.body)).toContain("after refresh"));
    expect(live.changes).toEqual([true]);
    expect(live.client.isAuthenticated).toBe(true);
    expect(await live.client.query(api.users.me, {})).toMatchObject({ _id: user.id });
  });

  it("revocation: the pushed auth_error signs the client out and stops its queries", async () => {
    const adminEmail = email();
    const admin = await app.signUp(adminEmail);
    await app.makeAdmin(adminEmail);
    const { auth, user, live, me } = await signedIn();
    const session = await app.backend.read((db) =>
      db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", user.id))
        .first(),
    );
    const revoke = await admin.browser.post("/api/auth/admin/revoke-user-session", {
      sessionToken: session!.token,
    });
    expect(revoke.status).toBe(200);
    await eventually(() => expect(live.authErrors()).toMatchObject([{ code: "UNAUTHORIZED" }]));
    await eventually(() => expect(live.changes).toEqual([true, false]));
    expect(live.client.isAuthenticated).toBe(false);
    expect(me.errors.map((e) => e.code)).toContain("UNAUTHORIZED");
    // The stored cookie is now worthless: the token endpoint refuses it.
    expect(await auth.fetchToken({ forceRefresh: true })).toBeNull();
  });

  it("sign-out ends the session on the server, forgets it locally and signs the client out", async () => {
    const storage = appStorage();
    const { auth, live } = await signedIn(storage);
    const tokenBefore = await auth.fetchToken({ forceRefresh: true });
    expect(tokenBefore).toEqual(expect.any(String));
    await auth.signOut();
    expect(storage.items.size).toBe(0);
    expect(await auth.hasSession()).toBe(false);
    // The server deleted the session: the pushed auth_error and the refresh's null sign the client out.
    await eventually(() => expect(live.changes).toEqual([true, false]));
    expect(live.authErrors()).toMatchObject([{ code: "UNAUTHORIZED" }]);
    expect(await auth.fetchToken({ forceRefresh: true })).toBeNull();
    expect((await app.call("query", "users:me", {}, tokenBefore)).status).toBe(401);
  });
});

describe("the cookie header bridge format", () => {
  it("splits joined Set-Cookie lines, not Expires dates, and applies set, replace and removal", () => {
    const lines = splitSetCookie(
      "a=1; Max-Age=60; Path=/, b=2; Expires=Thu, 01 Jan 2099 00:00:00 GMT; HttpOnly, c=; Max-Age=0",
    );
    expect(lines).toEqual([
      "a=1; Max-Age=60; Path=/",
      "b=2; Expires=Thu, 01 Jan 2099 00:00:00 GMT; HttpOnly",
      "c=; Max-Age=0",
    ]);
    const jar = applySetCookie({ c: { value: "old" }, d: { value: "keep" } }, lines, 1_000);
    expect(jar).toEqual({
      a: { value: "1", expiresAt: 61_000 },
      b: { value: "2", expiresAt: Date.parse("Thu, 01 Jan 2099 00:00:00 GMT") },
      d: { value: "keep" },
    });
  });
});
