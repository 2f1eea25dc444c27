/** The framework-free client against a real server: live queries, calls, reconnects and auth. */

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { anyApi } from "../../src/backend/functions/references.ts";
import { BackendClient, type BackendError } from "../../src/client/index.ts";
import { eventually } from "../helpers/wait.ts";
import { makeKeys } from "../sync/fixtures/auth.ts";
import { type Session, type SyncApp, startSyncApp } from "../sync/fixtures/harness.ts";

const api = anyApi;
let app: SyncApp;
const clients: BackendClient[] = [];

beforeAll(async () => {
  app = await startSyncApp();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(() => app?.close());

/** Every server message received by the test's clients, in order. */
const received: any[] = [];
class RecordingWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    this.on("message", (data) => received.push(JSON.parse(String(data))));
  }
}

function client(url = app.service.url): BackendClient {
  const c = new BackendClient(url, {
    WebSocket: RecordingWebSocket as any,
    reconnectInitialDelayMs: 50,
    reconnectMaxDelayMs: 500,
  });
  clients.push(c);
  return c;
}

/** Collects a subscription's values and errors. */
function watch(c: BackendClient, ref: any, args: Record<string, unknown>) {
  const values: unknown[] = [];
  const errors: BackendError[] = [];
  const stop = c.subscribe(
    ref,
    args,
    (v) => values.push(v),
    (e) => errors.push(e),
  );
  return { values, errors, stop, last: () => values[values.length - 1] };
}

/** A fetchToken like `GET /api/auth/backend/token`: a fresh JWT while the session is valid, else null (401). */
function tokenEndpoint(session: Session, ttlSeconds = 900) {
  const calls: { forceRefresh: boolean }[] = [];
  const fetchToken = async (opts: { forceRefresh: boolean }) => {
    calls.push(opts);
    const row = await app.service.backend.read((db) => db.get("sessions", session.sessionId));
    if (!row || !((row.expiresAt as number) > Date.now())) return null;
    return session.newToken(ttlSeconds);
  };
  return { calls, fetchToken };
}

describe("live queries and calls", () => {
  it("delivers the initial result and updates, and resolves a mutation after its own update", async () => {
    const c = client();
    const w = watch(c, api.messages.byChannel, { channel: "c1" });
    await eventually(() => expect(w.values).toEqual([[]]));
    const order: string[] = [];
    c.subscribe(api.messages.byChannel, { channel: "c1" }, (v) =>
      order.push(`update:${(v as string[]).length}`),
    );
    await eventually(() => expect(order).toEqual(["update:0"]));
    await c.mutation(api.messages.post, { channel: "c1", body: "hi" }).then(() => order.push("resolved"));
    expect(order).toEqual(["update:0", "update:1", "resolved"]);
    expect(w.last()).toEqual(["hi"]);
    expect(await c.query(api.messages.byChannel, { channel: "c1" })).toEqual(["hi"]);
    expect(await c.action(api.messages.echo, { text: "yo" })).toBe("YO");
    await expect(c.mutation(api.messages.send, { channel: "c1", body: "x" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    w.stop();
  });

  it("reports query errors to onError", async () => {
    const c = client();
    const w = watch(c, api.messages.fail, {});
    await eventually(() => expect(w.errors.map((e) => e.code)).toEqual(["FORBIDDEN"]));
  });

  it("with lazyConnect opens its socket at the first use, not before", async () => {
    let sockets = 0;
    class CountingWebSocket extends WebSocket {
      constructor(url: string) {
        super(url);
        sockets++;
      }
    }
    const lazy = () => {
      const c = new BackendClient(app.service.url, {
        WebSocket: CountingWebSocket as any,
        lazyConnect: true,
      });
      clients.push(c);
      return c;
    };
    const idle = lazy();
    idle.clearAuth(); // signing out needs no socket
    expect(sockets).toBe(0);
    expect(idle.connectionState).toBe("connecting");
    // Each first use opens one socket: a subscription, a call, or setAuth.
    const w = watch(lazy(), api.messages.byChannel, { channel: "lazy" });
    expect(sockets).toBe(1);
    expect(await lazy().query(api.messages.byChannel, { channel: "lazy" })).toEqual([]);
    expect(sockets).toBe(2);
    const authed = lazy();
    authed.setAuth(async () => null);
    expect(sockets).toBe(3);
    await eventually(() => expect(authed.connectionState).toBe("open"));
    await eventually(() => expect(w.values).toEqual([[]]));
    // Later uses reuse the socket.
    expect(await authed.query(api.messages.byChannel, { channel: "lazy" })).toEqual([]);
    expect(sockets).toBe(3);
  });

  it("reconnects after a server restart and restores its subscriptions", async () => {
    const keyState = { keys: [await makeKeys("r1")] };
    const first = await startSyncApp({ keyState });
    const port = first.service.port;
    const databaseUrl = first.service.databaseFile;
    const c = client(first.service.url);
    const states: string[] = [];
    const w = watch(c, api.messages.byChannel, { channel: "restart" });
    await c.mutation(api.messages.post, { channel: "restart", body: "before" });
    await eventually(() => expect(w.last()).toEqual(["before"]));
    await first.close();
    const second = await startSyncApp({ keyState, port, databaseUrl });
    try {
      await eventually(() => expect(c.connectionState).toBe("open"));
      states.push(c.connectionState);
      await second.service.backend.runMutation("messages:post", { channel: "restart", body: "after" });
      await eventually(() => expect(w.last()).toEqual(["before", "after"]));
      expect(w.errors).toEqual([]);
    } finally {
      c.close();
      await second.close();
    }
  });
});

describe("authentication", () => {
  it("authenticates with setAuth and reports isAuthenticated", async () => {
    const alice = await app.signIn("alice");
    const c = client();
    const changes: boolean[] = [];
    const t = tokenEndpoint(alice);
    c.setAuth(t.fetchToken, (v) => changes.push(v));
    const w = watch(c, api.messages.whoami, {});
    await eventually(() => expect(w.last()).toBe(alice.userId));
    expect(changes).toEqual([true]);
    expect(c.isAuthenticated).toBe(true);
    await c.mutation(api.messages.send, { channel: "auth", body: "signed" });
    c.clearAuth();
    await eventually(() => expect(w.last()).toBe(null));
    expect(changes).toEqual([true, false]);
  });

  it("refreshes short-lived tokens before they expire and stays signed in", async () => {
    const bob = await app.signIn("bob");
    const t = tokenEndpoint(bob, 3); // refreshed at half its lifetime, as 3 s < 2 × 60 s
    const c = client();
    const changes: boolean[] = [];
    const start = Date.now();
    c.setAuth(t.fetchToken, (v) => changes.push(v));
    const w = watch(c, api.messages.byChannel, { channel: "refresh" });
    await eventually(() => expect(w.values.length).toBe(1));
    received.length = 0;
    // Two refreshes, and real time beyond the first token's exp (3 s, plus a second of rounding).
    await eventually(() => {
      expect(t.calls.length).toBeGreaterThanOrEqual(3);
      expect(Date.now() - start).toBeGreaterThan(4_000);
    });
    // Refreshed on the live connection ahead of time: the server never had to refuse a token.
    expect(received.filter((m) => m.type === "authenticated").length).toBeGreaterThanOrEqual(2);
    expect(received.filter((m) => m.type === "auth_error")).toEqual([]);
    await c.mutation(api.messages.send, { channel: "refresh", body: "still here" });
    expect(w.last()).toEqual(["still here"]);
    expect(w.errors).toEqual([]);
    expect(changes).toEqual([true]);
  });

  it("signs out when the token endpoint answers 401 after the session is revoked", async () => {
    const carol = await app.signIn("carol");
    const t = tokenEndpoint(carol);
    const c = client();
    const changes: boolean[] = [];
    c.setAuth(t.fetchToken, (v) => changes.push(v));
    const w = watch(c, api.messages.byChannel, { channel: "revoke" });
    await eventually(() => expect(changes).toEqual([true]));
    await eventually(() => expect(w.values.length).toBe(1));
    await app.service.backend.write((db) => db.delete("sessions", carol.sessionId));
    await eventually(() => expect(changes).toEqual([true, false]));
    expect(c.isAuthenticated).toBe(false);
    expect(w.errors.map((e) => e.code)).toEqual(["UNAUTHORIZED"]);
    expect(t.calls.at(-1)).toEqual({ forceRefresh: true });
    // The query was stopped: later writes are not delivered.
    await app.service.backend.runMutation("messages:post", { channel: "revoke", body: "later" });
    await c.query(api.messages.whoami, {}).then((who) => expect(who).toBe(null));
    expect(w.values.length).toBe(1);
  });

  it("signs out a banned user whose refreshed token is refused again", async () => {
    const dan = await app.signIn("dan");
    const t = tokenEndpoint(dan);
    const c = client();
    const changes: boolean[] = [];
    c.setAuth(t.fetchToken, (v) => changes.push(v));
    const w = watch(c, api.messages.whoami, {});
    await eventually(() => expect(w.last()).toBe(dan.userId));
    await app.service.backend.write((db) => db.patch("users", dan.userId, { banned: true }));
    await eventually(() => expect(changes).toEqual([true, false]));
    expect(w.errors.map((e) => e.code)).toEqual(["ACCOUNT_BANNED"]);
  });

  it("keeps the user signed in through token endpoint failures, retrying with backoff", async () => {
    const erin = await app.signIn("erin");
    let failures = 0;
    const t = tokenEndpoint(erin, 3);
    const fetchToken = async (opts: { forceRefresh: boolean }) => {
      // Every refresh fails twice (network error, then a 5xx) before it succeeds.
      if (t.calls.length > 0 && failures < 2 * t.calls.length) {
        failures++;
        throw new Error(failures % 2 ? "fetch failed" : "HTTP 503");
      }
      return t.fetchToken(opts);
    };
    const c = new BackendClient(app.service.url, {
      WebSocket: RecordingWebSocket as any,
      token: { retryInitialDelayMs: 50, retryMaxDelayMs: 200 },
    });
    clients.push(c);
    const changes: boolean[] = [];
    const start = Date.now();
    c.setAuth(fetchToken, (v) => changes.push(v));
    const w = watch(c, api.messages.whoami, {});
    await eventually(() => expect(w.last()).toBe(erin.userId));
    // A refresh got through its failures, and real time passed the first token's exp.
    await eventually(() => {
      expect(failures).toBeGreaterThanOrEqual(2);
      expect(t.calls.length).toBeGreaterThanOrEqual(2);
      expect(Date.now() - start).toBeGreaterThan(4_000);
    });
    expect(changes).toEqual([true]);
    expect(c.isAuthenticated).toBe(true);
    await c.mutation(api.messages.send, { channel: "flaky", body: "ok" });
    expect(w.errors).toEqual([]);
  });

  it("recovers from an auth error with one forced refresh (key rotation)", async () => {
    const keyState = { keys: [await makeKeys("a1")] };
    const rot = await startSyncApp({ keyState });
    try {
      const gina = await rot.signIn("gina");
      const calls: boolean[] = [];
      const c = client(rot.service.url);
      const changes: boolean[] = [];
      c.setAuth(
        async ({ forceRefresh }) => {
          calls.push(forceRefresh);
          return gina.newToken();
        },
        (v) => changes.push(v),
      );
      const w = watch(c, api.messages.byChannel, { channel: "rot" });
      await eventually(() => expect(w.values.length).toBe(1));
      keyState.keys = [await makeKeys("a2")];
      await rot.service.backend.write((db) =>
        db.patch("sessions", gina.sessionId, { touchedAt: Date.now() }),
      );
      await eventually(() => expect(calls).toContain(true));
      await c.mutation(api.messages.send, { channel: "rot", body: "after rotation" });
      await eventually(() => expect(w.last()).toEqual(["after rotation"]));
      expect(changes).toEqual([true]);
      expect(w.errors).toEqual([]);
      c.close();
    } finally {
      await rot.close();
    }
  });
});
