/**
 * In Node.js 22 and later the client needs no WebSocket package: `globalThis.WebSocket` (undici's,
 * the WHATWG one browsers have) carries live queries, calls and a reconnect after a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anyApi } from "../../src/backend/functions/references.ts";
import { BackendClient } from "../../src/client/index.ts";
import { eventually } from "../helpers/wait.ts";
import { type SyncApp, startSyncApp } from "../sync/fixtures/harness.ts";

const api = anyApi;
let app: SyncApp;

beforeAll(async () => {
  app = await startSyncApp();
});
afterAll(() => app?.close());

describe("the client on Node's global WebSocket", () => {
  it("is there on every supported Node line", () => {
    expect(typeof globalThis.WebSocket).toBe("function");
  });

  it("delivers a live query's updates and the answers of calls, without the ws package", async () => {
    const client = new BackendClient(app.service.url);
    try {
      const values: unknown[] = [];
      client.subscribe(api.messages.byChannel, { channel: "global" }, (v) => values.push(v));
      await eventually(() => expect(values).toEqual([[]]));
      await client.mutation(api.messages.post, { channel: "global", body: "hello" });
      await eventually(() => expect(values[values.length - 1]).toEqual(["hello"]));
      expect(await client.query(api.messages.byChannel, { channel: "global" })).toEqual(["hello"]);
      expect(await client.action(api.messages.echo, { text: "yo" })).toBe("YO");
    } finally {
      client.close();
    }
  });
});
