/** Bad input on the socket: typed errors or a close with a reason code, and the server carries on. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawSocket, type SyncApp, startSyncApp } from "./fixtures/harness.ts";

let app: SyncApp;
beforeAll(async () => {
  app = await startSyncApp({
    sync: {
      maxSubscriptions: 3,
      maxMessageBytes: 4096,
      maxInFlight: 2,
      maxProtocolErrors: 5,
      idleTimeoutMs: 800,
      handshakeTimeoutMs: 500,
    },
  });
});
afterAll(() => app?.close());

/** The server still serves new connections. */
async function expectHealthy(): Promise<void> {
  const s = await RawSocket.connect(app.wsUrl);
  s.send({ type: "ping" });
  expect(await s.next()).toEqual({ type: "pong" });
  s.close();
}

describe("handshake", () => {
  it("closes with 4002 when the first message is not connect", async () => {
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "subscribe", id: 1, path: "messages:whoami", args: {} });
    expect(await s.closed).toEqual({ code: 4002, reason: "expected a connect message" });
  });

  it("closes with 4001 for an unsupported protocol version", async () => {
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "connect", v: 99 });
    const closed = await s.closed;
    expect(closed.code).toBe(4001);
    expect(closed.reason).toMatch(/unsupported protocol version/);
  });

  it("closes a socket that never sends connect", async () => {
    const s = await RawSocket.open(app.wsUrl);
    expect((await s.closed).code).toBe(4002);
  });

  it("answers connected with the version and limits", async () => {
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "connect", v: 1 });
    expect(await s.next()).toEqual({
      type: "connected",
      v: 1,
      authenticated: false,
      idleTimeoutMs: 800,
      maxMessageBytes: 4096,
      maxSubscriptions: 3,
      maxInFlight: 2,
    });
    s.send({ type: "connect", v: 1 });
    expect(await s.next()).toMatchObject({ type: "error", code: "PROTOCOL_ERROR" });
    s.close();
  });

  it("answers connect and an authenticate sent before connected arrived, in order", async () => {
    const { token } = await app.signIn("eager");
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "connect", v: 1, token });
    s.send({ type: "authenticate", token });
    expect(await s.next()).toMatchObject({ type: "connected", authenticated: true });
    expect(await s.next()).toEqual({ type: "authenticated", authenticated: true });
    s.close();
  });

  it("refuses upgrades on other paths", async () => {
    const s = new RawSocket(app.wsUrl.replace("/api/sync", "/api/other"));
    const error = await new Promise<Error>((resolve) => s.ws.once("error", resolve));
    expect(error.message).toMatch(/404/);
  });
});

describe("bad messages", () => {
  it("answers malformed, unknown and incomplete messages with typed errors", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send("{not json");
    expect(await s.next()).toEqual({
      type: "error",
      code: "BAD_MESSAGE",
      message: "Message is not valid JSON",
    });
    s.send({ type: "frobnicate", id: 5 });
    expect(await s.next()).toMatchObject({ type: "error", id: 5, code: "UNKNOWN_MESSAGE_TYPE" });
    s.send({ type: "subscribe", path: "messages:whoami" });
    expect(await s.next()).toMatchObject({ type: "error", code: "BAD_MESSAGE" });
    s.send({ type: "mutation", id: 6, path: "messages:post", args: [1] });
    expect(await s.next()).toMatchObject({ type: "error", id: 6, code: "INVALID_ARGUMENTS" });
    s.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await s.next()).toMatchObject({ type: "error", code: "BAD_MESSAGE" });
    // Still usable.
    s.send({ type: "query", id: 7, path: "messages:whoami", args: {} });
    expect(await s.next()).toEqual({ type: "result", id: 7, value: null });
    s.close();
  });

  it("closes with 4000 after too many malformed messages", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    for (let i = 0; i < 10; i++) s.send("[]");
    expect((await s.closed).code).toBe(4000);
    await expectHealthy();
  });

  it("closes with 1009 when a message exceeds the size limit", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({
      type: "mutation",
      id: 1,
      path: "messages:post",
      args: { channel: "big", body: "x".repeat(5000) },
    });
    expect((await s.closed).code).toBe(1009);
    await expectHealthy();
  });
});

describe("limits", () => {
  it("refuses subscriptions beyond the limit and duplicate ids", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    for (const id of [1, 2, 3]) {
      s.send({ type: "subscribe", id, path: "messages:byChannel", args: { channel: `l${id}` } });
      await s.next((m) => m.id === id);
    }
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "dup" } });
    expect(await s.next()).toEqual({
      type: "error",
      id: 1,
      code: "DUPLICATE_ID",
      message: "Subscription id already in use",
    });
    s.send({ type: "subscribe", id: 4, path: "messages:byChannel", args: { channel: "l4" } });
    expect(await s.next()).toEqual({
      type: "error",
      id: 4,
      code: "TOO_MANY_SUBSCRIPTIONS",
      message: "At most 3 subscriptions per connection before authenticating",
    });
    // Freeing one makes room.
    s.send({ type: "unsubscribe", id: 2 });
    s.send({ type: "subscribe", id: 4, path: "messages:byChannel", args: { channel: "l4" } });
    expect(await s.next()).toEqual({ type: "update", id: 4, value: [] });
    s.close();
  });

  it("refuses requests beyond the in-flight limit", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    for (const id of [1, 2, 3]) s.send({ type: "action", id, path: "messages:slow", args: { ms: 200 } });
    expect(await s.next()).toEqual({
      type: "result",
      id: 3,
      error: { code: "TOO_MANY_REQUESTS", message: "At most 2 requests in flight" },
    });
    expect(await s.next()).toEqual({ type: "result", id: 1, value: 200 });
    expect(await s.next()).toEqual({ type: "result", id: 2, value: 200 });
    // One answer per request and the connection stays open: a ping after them is answered, alone.
    s.send({ type: "ping" });
    expect(await s.next((m) => m.type === "pong")).toEqual({ type: "pong" });
    expect(s.pending()).toEqual([]);
    s.close();
  });

  it("does not close a connection as idle while its calls run, and does once they have answered", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    // Three idle limits of work, and nothing sent meanwhile: the client is waiting for us.
    s.send({ type: "action", id: 1, path: "messages:slow", args: { ms: 2400 } });
    expect(await s.next()).toEqual({ type: "result", id: 1, value: 2400 });
    expect(await s.closed).toEqual({ code: 4008, reason: "idle timeout" });
  });

  it("closes an idle connection with 4008 and keeps a pinging one", async () => {
    const idle = await RawSocket.connect(app.wsUrl);
    const busy = await RawSocket.connect(app.wsUrl);
    // Ping again on every pong: the busy socket is never quiet for longer than a round trip.
    const pingAgain = () => busy.send({ type: "ping" });
    busy.ws.on("message", pingAgain);
    pingAgain();
    try {
      expect(await idle.closed).toEqual({ code: 4008, reason: "idle timeout" });
      expect(busy.ws.readyState).toBe(1);
    } finally {
      busy.ws.off("message", pingAgain);
      busy.close();
    }
  });
});
