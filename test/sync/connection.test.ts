/**
 * One connection's own rules (`connection.ts`): the limits it announces per tier, the exact count
 * of malformed messages it answers before closing, the handshake's refusals and timeout, an idle
 * timeout of 0, a client that does not read its messages, and unsubscribe.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawSocket, type SyncApp, startSyncApp } from "./fixtures/harness.ts";

let app: SyncApp;
beforeAll(async () => {
  app = await startSyncApp({
    sync: {
      maxProtocolErrors: 2,
      handshakeTimeoutMs: 300,
      idleTimeoutMs: 0,
      maxSubscriptions: 5,
      maxInFlight: 4,
      maxBufferedBytes: 1 << 30,
      anonymous: { maxSubscriptions: 2, maxInFlight: 1, maxBufferedBytes: 64 * 1024 },
    },
  });
});
afterAll(() => app?.close());

describe("connected", () => {
  it("announces the anonymous tier's limits without a token and the general ones with one", async () => {
    const anon = await RawSocket.open(app.wsUrl);
    anon.send({ type: "connect", v: 1 });
    expect(await anon.next()).toEqual({
      type: "connected",
      v: 1,
      authenticated: false,
      idleTimeoutMs: 0,
      maxMessageBytes: 1024 * 1024,
      maxSubscriptions: 2,
      maxInFlight: 1,
    });
    const { token } = await app.signIn("tiers");
    const user = await RawSocket.open(app.wsUrl);
    user.send({ type: "connect", v: 1, token });
    expect(await user.next()).toEqual({
      type: "connected",
      v: 1,
      authenticated: true,
      idleTimeoutMs: 0,
      maxMessageBytes: 1024 * 1024,
      maxSubscriptions: 5,
      maxInFlight: 4,
    });
    anon.close();
    user.close();
  });
});

describe("handshake", () => {
  it("closes with 4002 when the first frame is binary or unreadable", async () => {
    for (const first of [Buffer.from([1, 2, 3]), "{not json"]) {
      const s = await RawSocket.open(app.wsUrl);
      s.ws.send(first);
      expect(await s.closed).toEqual({ code: 4002, reason: "expected a connect message" });
    }
  });

  it("closes with 4002 when no connect came within the handshake timeout", async () => {
    const s = await RawSocket.open(app.wsUrl);
    expect(await s.closed).toEqual({ code: 4002, reason: "no connect message" });
  });

  it("names the versions it speaks when it refuses one", async () => {
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "connect", v: 2 });
    expect(await s.closed).toEqual({ code: 4001, reason: "unsupported protocol version; server speaks 1" });
  });

  it("answers a second connect with a protocol error and stays open", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "connect", v: 1 });
    expect(await s.next()).toEqual({ type: "error", code: "PROTOCOL_ERROR", message: "Already connected" });
    s.send({ type: "ping" });
    expect(await s.next()).toEqual({ type: "pong" });
    s.close();
  });
});

describe("malformed messages", () => {
  it("answers exactly maxProtocolErrors of them, with their id when usable, then closes with 4000", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.ws.send(Buffer.from("{}"));
    expect(await s.next()).toEqual({
      type: "error",
      code: "BAD_MESSAGE",
      message: "Binary frames are not supported",
    });
    s.send({ type: "nope", id: "n1" });
    expect(await s.next()).toEqual({
      type: "error",
      id: "n1",
      code: "UNKNOWN_MESSAGE_TYPE",
      message: 'Unknown message type "nope"',
    });
    // Valid messages in between do not reset the count.
    s.send({ type: "ping" });
    expect(await s.next()).toEqual({ type: "pong" });
    s.send("[]");
    expect(await s.closed).toEqual({ code: 4000, reason: "too many malformed messages" });
    expect(s.pending()).toEqual([]);
  });
});

describe("timeouts", () => {
  it("never closes a quiet connection for idleness when idleTimeoutMs is 0", async () => {
    const quiet = await RawSocket.connect(app.wsUrl);
    // A barrier: a socket opened later is closed by a sweep after its handshake timeout, so a
    // sweep has run since the quiet one last spoke.
    const late = await RawSocket.open(app.wsUrl);
    expect((await late.closed).code).toBe(4002);
    expect(quiet.ws.readyState).toBe(1);
    quiet.send({ type: "ping" });
    expect(await quiet.next()).toEqual({ type: "pong" });
    quiet.close();
  });
});

describe("output", () => {
  it("closes with 4009 a connection whose unread output passes its tier's maxBufferedBytes", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "flood" } });
    expect(await s.next()).toEqual({ type: "update", id: 1, value: [] });
    const conn = [...app.sync.connections].at(-1);
    // The client stops reading; the updates pushed to it pile up in the server's send queue once
    // the kernel's buffers are full.
    s.ws.pause();
    const body = "x".repeat(64 * 1024);
    for (let n = 0; conn?.state !== "closed"; n++) {
      if (n === 400) throw new Error("400 updates queued and the connection is still open");
      await app.service.backend.write((db) => db.insert("messages", { channel: "flood", body, author: "a" }));
      // A SQLite write settles in microtasks: let the event loop send.
      await new Promise((resolve) => setImmediate(resolve));
    }
    s.ws.resume();
    expect(await s.closed).toEqual({ code: 4009, reason: "client is not reading its messages" });
  });
});

describe("unsubscribe", () => {
  it("ends the subscription: a later commit of its channel is not pushed", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: "a", path: "messages:byChannel", args: { channel: "u" } });
    expect(await s.next()).toEqual({ type: "update", id: "a", value: [] });
    s.send({ type: "unsubscribe", id: "a" });
    s.send({ type: "unsubscribe", id: "never-subscribed" });
    // A mutation's result is sent after the connection's subscriptions show its commit.
    s.send({ type: "mutation", id: "m", path: "messages:post", args: { channel: "u", body: "hi" } });
    expect(await s.next()).toMatchObject({ type: "result", id: "m" });
    expect(s.pending()).toEqual([]);
    // The id is free again.
    s.send({ type: "subscribe", id: "a", path: "messages:byChannel", args: { channel: "u" } });
    expect(await s.next()).toEqual({ type: "update", id: "a", value: ["hi"] });
    s.close();
  });
});
