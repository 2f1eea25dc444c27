/**
 * Crash safety: a server killed with SIGKILL in the middle of a stream of mutations loses no
 * acknowledged mutation and leaves no partial one. Runs the fixture server as a child process.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callFunction } from "../helpers/http.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const SERVER = join(ROOT, "test/fixtures/server.ts");
const running: SpawnedServer[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.kill();
});

async function start(databaseFile: string): Promise<SpawnedServer> {
  const server = await spawnServer(SERVER, { DATABASE_URL: databaseFile });
  running.push(server);
  return server;
}

/**
 * Sends mutations from `workers` concurrent loops until a request fails (the server died),
 * SIGKILLing the server once `killAfter` have been acknowledged. Returns what was acknowledged.
 */
async function streamAndKill(server: SpawnedServer, round: number, killAfter: number) {
  const ackedMessages: string[] = [];
  const ackedBatches: string[] = [];
  let next = 0;
  let killing: Promise<void> | undefined;
  const worker = async () => {
    for (;;) {
      const i = next++;
      const pair = i % 2 === 1;
      const name = `r${round}-${i}`;
      try {
        const r = pair
          ? await callFunction(server.url, "mutation", "batches:insertPair", { batch: name })
          : await callFunction(server.url, "mutation", "messages:send", {
              body: name,
              author: `round${round}`,
            });
        if (r.status !== 200) throw new Error(`unexpected ${r.status}: ${r.text}`);
        (pair ? ackedBatches : ackedMessages).push(name);
      } catch (e) {
        if (killing) return; // the server is gone: this request was never acknowledged
        throw e;
      }
      if (!killing && ackedMessages.length + ackedBatches.length >= killAfter)
        killing = server.kill("SIGKILL");
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await killing;
  running.splice(running.indexOf(server), 1);
  return { ackedMessages, ackedBatches, attempted: next };
}

describe("crash safety", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("keeps every acknowledged mutation and no partial one across SIGKILLs", async () => {
    const file = tempDatabaseFile();
    const acked = { messages: [] as string[], batches: [] as string[] };
    let attempted = 0;
    for (const round of [1, 2]) {
      const server = await start(file);
      const r = await streamAndKill(server, round, 150);
      acked.messages.push(...r.ackedMessages);
      acked.batches.push(...r.ackedBatches);
      attempted += r.attempted;
    }
    // Some requests were in flight when the process died.
    expect(attempted).toBeGreaterThan(acked.messages.length + acked.batches.length);

    const server = await start(file);
    const messages = (await callFunction(server.url, "query", "messages:list")).body.value as {
      body: string;
      author: string;
    }[];
    const bodies = messages.map((m) => m.body);
    expect(new Set(bodies).size).toBe(bodies.length);
    for (const body of acked.messages) expect(bodies).toContain(body);
    for (const m of messages) expect(m.author).toMatch(/^round[12]$/);

    const parts = (await callFunction(server.url, "query", "batches:all")).body.value as {
      batch: string;
      part: number;
      payload: string;
    }[];
    const byBatch = new Map<string, number[]>();
    for (const p of parts) {
      expect(p.payload).toHaveLength(2000);
      byBatch.set(p.batch, [...(byBatch.get(p.batch) ?? []), p.part]);
    }
    for (const [batch, got] of byBatch) expect(got.sort(), batch).toEqual([1, 2]);
    for (const batch of acked.batches) expect(byBatch.has(batch), batch).toBe(true);

    // The database is healthy: new writes work after recovery.
    const after = await callFunction(server.url, "mutation", "batches:insertPair", { batch: "after" });
    expect(after.status).toBe(200);
  });
});
