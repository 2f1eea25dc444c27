/**
 * The sync server itself (`attachSync`): which upgrades it takes, the frame limit it gives `ws`,
 * the address a connection is counted under, the server-wide output budget, the env store's
 * re-check of identities, and shutdown (results first, then 1001; stragglers cut). Each test starts
 * its own service, so what the server sets up is covered by that test (mutation testing).
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { RunningHttpServer } from "../../src/backend/http/node-server.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { attachSync, type SyncOptions, type SyncServer } from "../../src/backend/sync/server.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";
import { authConfig, makeKeys, signToken, type TestKeys } from "./fixtures/auth.ts";
import { RawSocket } from "./fixtures/harness.ts";
import * as messages from "./fixtures/messages.ts";
import schema from "./fixtures/schema.ts";

interface App {
  service: TestService;
  sync: SyncServer;
  keyState: { keys: TestKeys[] };
  wsUrl(path?: string): string;
  token(): Promise<string>;
}

const apps: App[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.service.close()));
});

async function startApp(sync: SyncOptions = {}): Promise<App> {
  const keyState = { keys: [await makeKeys("k1")] };
  let server: SyncServer | undefined;
  const service = await startTestService({
    schema,
    modules: { messages },
    auth: authConfig(keyState),
    attach: (backend: BackendRuntime, http: RunningHttpServer) => {
      server = attachSync(backend, http, { sweepIntervalMs: 50, ...sync });
      return server;
    },
  });
  const app: App = {
    service,
    sync: server as SyncServer,
    keyState,
    wsUrl: (path = "/api/sync") => `ws://127.0.0.1:${service.port}${path}`,
    async token() {
      const userId = await service.backend.write((db) => db.insert("users", { name: "u", banned: false }));
      const sessionId = await service.backend.write((db) =>
        db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
      );
      return signToken(keyState.keys[0], { sub: userId, sessionId });
    },
  };
  apps.push(app);
  return app;
}

/** The HTTP status line an upgrade request to `path` is answered with. */
function upgradeReply(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(upgradeRequest(path)));
    socket.once("data", (data) => {
      socket.destroy();
      resolve(String(data).split("\r\n")[0]);
    });
    socket.once("error", reject);
  });
}

const upgradeRequest = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
  "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n";

describe("upgrades", () => {
  it("serves its configured path, with or without a query string, and refuses others with 404", async () => {
    const app = await startApp({ path: "/live" });
    for (const path of ["/live", "/live?v=1&x=/api/sync"]) {
      const s = await RawSocket.connect(app.wsUrl(path));
      s.send({ type: "ping" });
      expect(await s.next()).toEqual({ type: "pong" });
      s.close();
    }
    for (const path of ["/api/sync", "/live/", "/liv", "/other?/live"]) {
      expect(await upgradeReply(app.service.port, path), path).toBe("HTTP/1.1 404 Not Found");
    }
  });

  it("leaves other paths to another upgrade handler", async () => {
    const app = await startApp();
    const server = app.service.http.server;
    const other = (req: { url?: string }, socket: Socket) => {
      if (req.url !== "/api/sync") socket.end("HTTP/1.1 418 I'm a teapot\r\nContent-Length: 0\r\n\r\n");
    };
    server.on("upgrade", other);
    try {
      expect(await upgradeReply(app.service.port, "/elsewhere")).toBe("HTTP/1.1 418 I'm a teapot");
      // The sync path is still the sync server's.
      expect(await upgradeReply(app.service.port, "/api/sync")).toBe("HTTP/1.1 101 Switching Protocols");
    } finally {
      server.off("upgrade", other);
    }
  });

  it("accepts frames of exactly maxMessageBytes, closes larger ones with 1009, and negotiates no compression", async () => {
    const app = await startApp({ maxMessageBytes: 200 });
    const s = await RawSocket.connect(app.wsUrl());
    expect(s.ws.extensions).toBe("");
    const frame = (size: number) => {
      const base = JSON.stringify({ type: "ping", pad: "" });
      return JSON.stringify({ type: "ping", pad: "x".repeat(size - base.length) });
    };
    expect(frame(200)).toHaveLength(200);
    s.send(frame(200));
    expect(await s.next()).toEqual({ type: "pong" });
    s.send(frame(201));
    expect((await s.closed).code).toBe(1009);
  });
});

describe("client addresses", () => {
  it("counts a connection under the address a trusted proxy names, an IPv6 client by its /64", async () => {
    const app = await startApp({ maxConnectionsPerAddress: 1 });
    await app.service.backend.env.set("TRUSTED_PROXIES", "127.0.0.1");
    const via = (forwarded: string) => ({
      headers: { "x-forwarded-for": forwarded, "user-agent": "probe/1" },
    });
    const a = await RawSocket.connect(app.wsUrl(), null, via("203.0.113.7"));
    const b = await RawSocket.connect(app.wsUrl(), null, via("203.0.113.8"));
    const metas = [...app.sync.connections].map((c) => c.meta);
    expect(metas).toEqual([
      { clientIp: "203.0.113.7", userAgent: "probe/1" },
      { clientIp: "203.0.113.8", userAgent: "probe/1" },
    ]);
    const again = await RawSocket.open(app.wsUrl(), via("198.51.100.1, 203.0.113.7"));
    expect(await again.closed).toEqual({ code: 4029, reason: "too many connections from this address" });
    const v6 = await RawSocket.connect(app.wsUrl(), null, via("2001:db8:1:2::1"));
    const sameNet = await RawSocket.open(app.wsUrl(), via("2001:db8:1:2::ffff"));
    expect(await sameNet.closed).toEqual({ code: 4029, reason: "too many connections from this address" });
    for (const s of [a, b, v6]) s.close();
  });
});

describe("while serving", () => {
  it("pushes the commits to subscriptions", async () => {
    const app = await startApp();
    const s = await RawSocket.connect(app.wsUrl());
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "c" } });
    expect(await s.next()).toEqual({ type: "update", id: 1, value: [] });
    s.send({ type: "mutation", id: 2, path: "messages:post", args: { channel: "c", body: "hi" } });
    expect(await s.next((m) => m.type === "update")).toEqual({ type: "update", id: 1, value: ["hi"] });
    s.close();
  });

  it("re-checks every identity when the env store changes", async () => {
    const app = await startApp();
    const s = await RawSocket.connect(app.wsUrl(), await app.token());
    app.keyState.keys = [await makeKeys("k2")];
    await app.service.backend.env.set("SERVER_TEST_ROTATION", "1");
    expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
    s.close();
  });

  it("closes the connections with the most unread output once the server-wide budget is passed", async () => {
    // Each connection may queue far more than the server as a whole: only the server-wide budget acts.
    const app = await startApp({
      // 0: the stalled queue alone is the whole excess, so closing it frees exactly enough.
      maxTotalBufferedBytes: 0,
      maxBufferedBytes: 1 << 30,
      anonymous: { maxBufferedBytes: 1 << 30 },
    });
    const reader = await RawSocket.connect(app.wsUrl());
    const stalled = await RawSocket.connect(app.wsUrl());
    const [readerConn, stalledConn] = [...app.sync.connections];
    stalled.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "big" } });
    await stalled.next((m) => m.type === "update");
    // The stalled client stops reading; the updates pushed to it pile up in the server's send
    // queue (once the kernel's buffers are full) until a sweep sees the budget passed.
    stalled.ws.pause();
    const body = "x".repeat(256 * 1024);
    for (let n = 0; stalledConn.state !== "closed"; n++) {
      if (n === 200) throw new Error("200 updates queued and the stalled connection is still open");
      await app.service.backend.write((db) => db.insert("messages", { channel: "big", body, author: "a" }));
      // A SQLite write settles in microtasks: let the event loop reach its timers (the sweep).
      await new Promise((resolve) => setImmediate(resolve));
    }
    stalled.ws.resume();
    expect(await stalled.closed).toEqual({
      code: 4009,
      reason: "server output budget exceeded; client is not reading",
    });
    expect(readerConn.state).toBe("open");
    reader.send({ type: "ping" });
    expect(await reader.next()).toEqual({ type: "pong" });
    reader.close();
  });
});

describe("close", () => {
  it("answers the calls in flight, then closes with 1001, refuses new upgrades and is idempotent", async () => {
    const app = await startApp();
    const idle = await RawSocket.connect(app.wsUrl());
    const busy = await RawSocket.connect(app.wsUrl());
    busy.send({ type: "action", id: 1, path: "messages:slow", args: { ms: 1500 } });
    busy.send({ type: "ping" });
    await busy.next((m) => m.type === "pong");
    const closing = app.sync.close(Date.now() + 60_000);
    expect(app.sync.close()).toBe(closing);
    expect(await idle.closed).toEqual({ code: 1001, reason: "server shutting down" });
    // A call arriving during shutdown still runs; its answer does not close while call 1 runs.
    busy.send({ type: "action", id: 2, path: "messages:slow", args: { ms: 1 } });
    expect(await busy.next()).toEqual({ type: "result", id: 2, value: 1 });
    expect(await busy.next()).toEqual({ type: "result", id: 1, value: 1500 });
    expect(await busy.closed).toEqual({ code: 1001, reason: "server shutting down" });
    await closing;
    expect(app.sync.connections.size).toBe(0);
    const late = new RawSocket(app.wsUrl());
    const refused = await new Promise<Error>((resolve) => late.ws.once("error", resolve));
    // No upgrade handler is left: the HTTP routes answer the request as a plain GET.
    expect(refused.message).toBe("Unexpected server response: 404");
  });

  it("closes at once without connections, whatever the deadline", async () => {
    const app = await startApp();
    await app.sync.close(Date.now() + 60_000);
    expect(app.sync.connections.size).toBe(0);
  }, 15_000);

  it("cuts calls still running at the deadline", async () => {
    const app = await startApp();
    const s = await RawSocket.connect(app.wsUrl());
    s.send({ type: "action", id: 1, path: "messages:slow", args: { ms: 2000 } });
    s.send({ type: "ping" });
    await s.next((m) => m.type === "pong");
    await app.sync.close(Date.now());
    expect(await s.closed).toEqual({ code: 1001, reason: "server shutting down" });
    expect(s.pending()).toEqual([]);
  });

  it("cuts a client that does not answer the close frame", async () => {
    const app = await startApp();
    // A raw TCP client: it completes the upgrade and then never writes again.
    const raw = connect(app.service.port, "127.0.0.1", () => raw.write(upgradeRequest("/api/sync")));
    raw.on("data", () => {});
    const cut = new Promise<void>((resolve) => raw.once("close", () => resolve()));
    await eventually(() => expect(app.sync.connections.size).toBe(1));
    await app.sync.close();
    await cut;
    expect(app.sync.connections.size).toBe(0);
  }, 15_000);
});
