/**
 * The floor of `npm run bench -- fanout` (bench/fixtures/raw-fanout.ts) must send what our server
 * sends: a socket subscribed to `bench:feed` on each server, the same messages posted to both (the
 * floor given our ids), and every update frame must be the same bytes, past the feed's 10-message
 * window too. (`connected` differs: ours lists its limits, which fan-out does not depend on.)
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { callFunction } from "../../bench/lib/api-call.ts";
import { type SpawnedServer, spawnServer } from "../../bench/lib/spawn.ts";
import { tempDir } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const fixture = (name: string) => fileURLToPath(new URL(`../../bench/fixtures/${name}`, import.meta.url));

/** A socket subscribed to `bench:feed` (id 1) that keeps every `update` frame it receives. */
async function subscriber(url: string): Promise<{ updates: string[]; close(): void }> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  const updates: string[] = [];
  ws.on("message", (data, isBinary) => {
    const text = String(data);
    expect(isBinary).toBe(false);
    if (text.includes('"type":"connected"'))
      ws.send(JSON.stringify({ type: "subscribe", id: 1, path: "bench:feed", args: {} }));
    else if (text.includes('"type":"update"')) updates.push(text);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ type: "connect", v: 1 }));
  await eventually(() => expect(updates.length).toBe(1));
  return { updates, close: () => ws.terminate() };
}

describe("the fan-out floor", () => {
  let ours: SpawnedServer;
  let floor: SpawnedServer;

  beforeAll(async () => {
    [ours, floor] = await Promise.all([
      spawnServer(fixture("sync-server.ts"), { BENCH_DATA_DIR: tempDir("fanout-floor-") }, 90_000),
      spawnServer(fixture("raw-fanout.ts")),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([ours?.stop(), floor?.stop()]);
  });

  it("sends the update frames our server sends for the same messages", async () => {
    const [{ userId }] = await callFunction(ours.url, "mutation", "bench:createSessions", {
      prefix: "f",
      n: 1,
    });
    const [a, b] = await Promise.all(
      [ours, floor].map((s) => subscriber(`ws://127.0.0.1:${s.port}/api/sync`)),
    );
    try {
      expect(b.updates[0]).toBe(a.updates[0]);
      // More than the feed holds, so both drop their oldest the same way; bodies that need escaping.
      for (let i = 0; i < 12; i++) {
        const body = `fan-out "${i}" ${"é".repeat(i)}\n`;
        const _id = await callFunction(ours.url, "mutation", "bench:post", { userId, body });
        const posted = await fetch(`${floor.url}/post`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ body, _id }),
        });
        expect(posted.status).toBe(200);
        await eventually(() => expect([a.updates.length, b.updates.length]).toEqual([i + 2, i + 2]));
        expect(a.updates[i + 1]).toContain(JSON.stringify(body));
        expect(b.updates[i + 1]).toBe(a.updates[i + 1]);
      }
      expect(JSON.parse(a.updates.at(-1)!).value).toHaveLength(10);
    } finally {
      a.close();
      b.close();
    }
  }, 120_000);

  it("draws ids of our ids' shape when none is given, and answers ping with pong", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${floor.port}/api/sync`, { perMessageDeflate: false });
    const frames: string[] = [];
    ws.on("message", (data) => frames.push(String(data)));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    try {
      ws.send(JSON.stringify({ type: "ping" }));
      await eventually(() => expect(frames).toContain('{"type":"pong"}'));
      const posted = await fetch(`${floor.url}/post`, {
        method: "POST",
        body: JSON.stringify({ body: "x" }),
      });
      const { value } = (await posted.json()) as { value: string };
      expect(value).toMatch(/^[a-z2-7]{30}$/);
      expect((await fetch(`${floor.url}/post`, { method: "POST", body: "{" })).status).toBe(400);
    } finally {
      ws.terminate();
    }
  });
});
