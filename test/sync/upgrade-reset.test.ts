/**
 * A WebSocket upgrade to a path the sync server does not serve is refused with a 404; a client
 * that then resets the connection must not crash the server (the upgraded socket has no other
 * error listener).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SyncApp, startSyncApp } from "./fixtures/harness.ts";

let app: SyncApp;
const uncaught: unknown[] = [];
const onUncaught = (e: unknown) => uncaught.push(e);

beforeAll(async () => {
  app = await startSyncApp();
  process.on("uncaughtException", onUncaught);
});
afterAll(async () => {
  process.off("uncaughtException", onUncaught);
  await app?.close();
});

describe("upgrade to an unknown path", () => {
  it("answers 404 and survives a reset from the client", async () => {
    // The server's end of the connection (watched from "connection": another "upgrade" listener
    // would change how the server answers): once it has closed, any error of the reset was emitted.
    const serverSideClosed = new Promise<void>((resolve) =>
      app.service.http.server.once("connection", (socket) => socket.once("close", () => resolve())),
    );
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(app.service.port, "127.0.0.1", () => {
        socket.write(
          "GET /not-sync HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
            "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        );
      });
      socket.once("data", (data) => {
        socket.resetAndDestroy();
        resolve(String(data));
      });
      socket.once("error", reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 404/);
    await serverSideClosed;
    const health = await fetch(`${app.service.url}/healthz`);
    expect(health.status).toBe(200);
    expect(uncaught).toEqual([]);
  });
});
