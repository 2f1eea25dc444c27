/**
 * The sync server's memory budget: what a connection may hold (subscriptions, messages awaiting an
 * answer) per connection and server-wide, tighter before it has an identity; connections per
 * address; refused subscriptions are not kept; deep arguments (oversize frames: hostile-clients).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningHttpServer } from "../../src/backend/http/node-server.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { attachSync, type SyncOptions, type SyncServer } from "../../src/backend/sync/server.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";
import { authConfig, makeKeys, signToken } from "./fixtures/auth.ts";
import { RawSocket } from "./fixtures/harness.ts";
import * as messages from "./fixtures/messages.ts";
import schema from "./fixtures/schema.ts";

interface BudgetApp {
  service: TestService;
  sync: SyncServer;
  wsUrl: string;
  token(): Promise<string>;
}

const apps: BudgetApp[] = [];

async function startApp(sync: SyncOptions): Promise<BudgetApp> {
  const keys = await makeKeys("k1");
  let server: SyncServer | undefined;
  const service = await startTestService({
    schema,
    modules: { messages },
    auth: authConfig({ keys: [keys] }),
    attach: (backend: BackendRuntime, http: RunningHttpServer) => {
      server = attachSync(backend, http, { sweepIntervalMs: 50, ...sync });
      return server;
    },
  });
  const app: BudgetApp = {
    service,
    sync: server as SyncServer,
    wsUrl: `ws://127.0.0.1:${service.port}/api/sync`,
    async token() {
      const userId = await service.backend.write((db) => db.insert("users", { name: "u", banned: false }));
      const sessionId = await service.backend.write((db) =>
        db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
      );
      return signToken(keys, { sub: userId, sessionId });
    },
  };
  apps.push(app);
  return app;
}

afterAll(async () => {
  await Promise.all(apps.map((a) => a.service.close()));
});

/** `levels` nested objects around a string. */
function nested(levels: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const subscribe = (id: number, channel: string) => ({
  type: "subscribe",
  id,
  path: "messages:byChannel",
  args: { channel },
});

describe("refused subscriptions", () => {
  let app: BudgetApp;
  beforeAll(async () => {
    app = await startApp({});
  });

  it("answers a subscribe to an unknown function, a mutation or with refused arguments, and keeps nothing", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    const groupsBefore = app.sync.groups.size;
    s.send({ type: "subscribe", id: 1, path: "nope:nothing", args: { junk: "x".repeat(100_000) } });
    expect(await s.next((m) => m.id === 1)).toMatchObject({
      type: "update",
      id: 1,
      error: { code: "FUNCTION_NOT_FOUND" },
    });
    s.send({ type: "subscribe", id: 2, path: "messages:byChannel", args: { channel: 5 } });
    expect(await s.next((m) => m.id === 2)).toMatchObject({ error: { code: "INVALID_ARGUMENTS" } });
    // A function that is not a query can never run as one either.
    s.send({ type: "subscribe", id: 3, path: "messages:send", args: { channel: "c", body: "b" } });
    expect(await s.next((m) => m.id === 3)).toEqual({
      type: "update",
      id: 3,
      error: { code: "FUNCTION_NOT_FOUND", message: '"messages:send" is a mutation, not a query' },
    });
    const [conn] = [...app.sync.connections];
    expect(conn.subscriptionCount).toBe(0);
    expect(app.sync.groups.size).toBe(groupsBefore);
    // The id was not taken: it can be used for a real subscription.
    s.send(subscribe(1, "refused"));
    expect(await s.next((m) => m.id === 1)).toEqual({ type: "update", id: 1, value: [] });
    expect(conn.subscriptionCount).toBe(1);
    s.close();
  });

  it("refuses arguments nested 3000 levels deep with INVALID_ARGUMENTS on subscribe and query", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    const args = { channel: "deep", extra: nested(3000) };
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args });
    expect(await s.next((m) => m.id === 1)).toMatchObject({
      type: "update",
      error: { code: "INVALID_ARGUMENTS", message: "args nest deeper than 64 levels" },
    });
    s.send({ type: "query", id: 2, path: "messages:byChannel", args });
    expect(await s.next((m) => m.id === 2)).toMatchObject({
      type: "result",
      error: { code: "INVALID_ARGUMENTS", message: "args nest deeper than 64 levels" },
    });
    // At the limit the validator decides (here: no such field), not the depth check.
    s.send({ type: "query", id: 3, path: "messages:byChannel", args: { channel: "x", extra: nested(63) } });
    expect(await s.next((m) => m.id === 3)).toMatchObject({
      error: { code: "INVALID_ARGUMENTS", message: "args.extra is not a field of the validator" },
    });
    s.close();
  });

  it("refuses arguments nested 3000 levels deep on HTTP with INVALID_ARGUMENTS", async () => {
    const res = await fetch(`${app.service.url}/api/query`, {
      method: "POST",
      body: JSON.stringify({ path: "messages:byChannel", args: { channel: "x", extra: nested(3000) } }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: "error", code: "INVALID_ARGUMENTS" });
  });
});

describe("byte budgets", () => {
  it("limits the bytes of a connection's subscriptions, tighter before it authenticates", async () => {
    const app = await startApp({ maxSubscriptionBytes: 20_000, anonymous: { maxSubscriptionBytes: 5_000 } });
    const anon = await RawSocket.connect(app.wsUrl);
    anon.send(subscribe(1, "a".repeat(3_000)));
    expect(await anon.next((m) => m.id === 1)).toMatchObject({ type: "update", value: [] });
    anon.send(subscribe(2, "b".repeat(3_000)));
    expect(await anon.next((m) => m.id === 2)).toMatchObject({
      type: "error",
      code: "BUDGET_EXCEEDED",
      message: "The connection's (or the server's) subscriptions hold too many bytes",
    });
    // Ending one gives its bytes back.
    anon.send({ type: "unsubscribe", id: 1 });
    anon.send(subscribe(2, "b".repeat(3_000)));
    expect(await anon.next((m) => m.id === 2)).toMatchObject({ type: "update", value: [] });

    const user = await RawSocket.connect(app.wsUrl, await app.token());
    for (let id = 1; id <= 6; id++) {
      user.send(subscribe(id, `${id}`.repeat(3_000)));
      expect(await user.next((m) => m.id === id)).toMatchObject({ type: "update", value: [] });
    }
    user.send(subscribe(7, "7".repeat(3_000)));
    expect(await user.next((m) => m.id === 7)).toMatchObject({ type: "error", code: "BUDGET_EXCEEDED" });
    anon.close();
    user.close();
  });

  it("limits subscriptions and requests in flight more tightly before authenticating", async () => {
    const app = await startApp({ anonymous: { maxSubscriptions: 2 } });
    const anon = await RawSocket.connect(app.wsUrl);
    for (const id of [1, 2]) {
      anon.send(subscribe(id, `t${id}`));
      await anon.next((m) => m.id === id);
    }
    anon.send(subscribe(3, "t3"));
    expect(await anon.next((m) => m.id === 3)).toMatchObject({
      type: "error",
      code: "TOO_MANY_SUBSCRIPTIONS",
    });
    // Authenticating lifts the connection to the general limits.
    anon.send({ type: "authenticate", token: await app.token() });
    await anon.next((m) => m.type === "authenticated");
    anon.send(subscribe(3, "t3"));
    expect(await anon.next((m) => m.id === 3)).toMatchObject({ type: "update", value: [] });
    anon.close();
  });

  it("refuses a request bigger than the bytes a connection may have awaiting answers", async () => {
    const app = await startApp({ anonymous: { maxPendingBytes: 2_000 } });
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "action", id: 1, path: "messages:echo", args: { text: "x".repeat(3_000) } });
    expect(await s.next((m) => m.id === 1)).toMatchObject({ type: "error", id: 1, code: "BUDGET_EXCEEDED" });
    s.send({ type: "action", id: 2, path: "messages:echo", args: { text: "small" } });
    expect(await s.next((m) => m.id === 2)).toEqual({ type: "result", id: 2, value: "SMALL" });
    // A request of exactly the limit fits (bytes as sent: the frame's JSON text, ASCII here).
    const empty = JSON.stringify({ type: "action", id: 3, path: "messages:echo", args: { text: "" } });
    const text = "y".repeat(2_000 - empty.length);
    s.send({ type: "action", id: 3, path: "messages:echo", args: { text } });
    expect(await s.next((m) => m.id === 3)).toEqual({ type: "result", id: 3, value: text.toUpperCase() });
    s.close();
  });

  it("holds no bytes for messages that are not requests: pings and unsubscribes pass a spent budget", async () => {
    // Smaller than any message: every request is refused, and nothing else may be.
    const app = await startApp({ anonymous: { maxPendingBytes: 10 } });
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "query", id: 1, path: "messages:byChannel", args: { channel: "x" } });
    expect(await s.next()).toMatchObject({ type: "error", id: 1, code: "BUDGET_EXCEEDED" });
    s.send({ type: "unsubscribe", id: 1 });
    s.send({ type: "ping" });
    // The unsubscribe has no answer; an error for it would arrive before the pong.
    expect(await s.next()).toEqual({ type: "pong" });
    s.close();
  });

  it("counts connections with an identity against the server-wide budget too", async () => {
    const app = await startApp({ maxTotalBytes: 5_000 });
    const first = await RawSocket.connect(app.wsUrl, await app.token());
    first.send(subscribe(1, "f".repeat(3_000)));
    expect(await first.next((m) => m.id === 1)).toMatchObject({ type: "update", value: [] });
    const second = await RawSocket.connect(app.wsUrl, await app.token());
    second.send(subscribe(1, "s".repeat(3_000)));
    expect(await second.next((m) => m.id === 1)).toMatchObject({ type: "error", code: "BUDGET_EXCEEDED" });
    first.close();
    second.close();
  });

  it("does not count connections with an identity against the anonymous share", async () => {
    const app = await startApp({ maxAnonymousTotalBytes: 5_000 });
    const anon = await RawSocket.connect(app.wsUrl);
    anon.send(subscribe(1, "a".repeat(3_000)));
    expect(await anon.next((m) => m.id === 1)).toMatchObject({ type: "update", value: [] });
    // 3,000 more bytes would pass the anonymous share (5,000), not the server's total.
    const user = await RawSocket.connect(app.wsUrl, await app.token());
    user.send(subscribe(1, "u".repeat(3_000)));
    expect(await user.next((m) => m.id === 1)).toMatchObject({ type: "update", value: [] });
    const text = "v".repeat(3_000);
    user.send({ type: "action", id: 2, path: "messages:echo", args: { text } });
    expect(await user.next((m) => m.id === 2)).toEqual({ type: "result", id: 2, value: text.toUpperCase() });
    anon.close();
    user.close();
  });

  it("shares a server-wide budget between connections, and gives it back when they close", async () => {
    const app = await startApp({ maxAnonymousTotalBytes: 5_000 });
    const first = await RawSocket.connect(app.wsUrl);
    first.send(subscribe(1, "f".repeat(3_000)));
    expect(await first.next((m) => m.id === 1)).toMatchObject({ type: "update" });
    const second = await RawSocket.connect(app.wsUrl);
    second.send(subscribe(1, "s".repeat(3_000)));
    expect(await second.next((m) => m.id === 1)).toMatchObject({ type: "error", code: "BUDGET_EXCEEDED" });
    first.close();
    await first.closed;
    await eventually(() => expect(app.sync.connections.size).toBe(1));
    second.send(subscribe(1, "s".repeat(3_000)));
    expect(await second.next((m) => m.id === 1)).toMatchObject({ type: "update", value: [] });
    second.close();
  });
});

describe("connections per address", () => {
  it("closes connections beyond the limit with 4029 and admits again once one closes", async () => {
    const app = await startApp({ maxConnectionsPerAddress: 2 });
    const a = await RawSocket.connect(app.wsUrl);
    const b = await RawSocket.connect(app.wsUrl);
    const c = await RawSocket.open(app.wsUrl);
    expect(await c.closed).toEqual({ code: 4029, reason: "too many connections from this address" });
    a.close();
    await a.closed;
    await eventually(() => expect(app.sync.connections.size).toBe(1));
    const d = await RawSocket.connect(app.wsUrl);
    d.send({ type: "ping" });
    expect(await d.next()).toEqual({ type: "pong" });
    // The one that closed was given back, no more: b and d are still counted.
    const e = await RawSocket.open(app.wsUrl);
    expect(await e.closed).toEqual({ code: 4029, reason: "too many connections from this address" });
    b.close();
    d.close();
  });
});
