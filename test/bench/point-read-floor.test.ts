/**
 * The floor of `npm run bench -- http` (bench/fixtures/raw-point-read.ts) must do the work our
 * `/api/query` point read does, no less: for the same request it answers the same bytes as our
 * server (status, body, headers but the date), for keys across the seeded range and for a key
 * nobody has; and so must its variant that parses the document and serializes the answer
 * (`BENCH_MATERIALIZE=1`), also when it writes its answers together (`BENCH_COALESCE=1`).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFor, pointReadBodies, SEED_COUNT } from "../../bench/fixtures/point-app.ts";
import { type SpawnedServer, spawnServer } from "../../bench/lib/spawn.ts";
import { tempDir } from "../helpers/temp.ts";

const fixture = (name: string) => fileURLToPath(new URL(`../../bench/fixtures/${name}`, import.meta.url));

async function ask(url: string, body: string) {
  const response = await fetch(`${url}/api/query`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const headers = Object.fromEntries(response.headers);
  // The only header whose value may differ between two answers.
  delete headers.date;
  return { status: response.status, body: await response.text(), headers };
}

describe("the point read floor", () => {
  let ours: SpawnedServer;
  let floor: SpawnedServer;
  let materializing: SpawnedServer;
  let coalescing: SpawnedServer;

  beforeAll(async () => {
    const dataDir = tempDir("point-floor-");
    // Seeding 10,000 documents on a loaded machine takes a while.
    ours = await spawnServer(fixture("platform-server.ts"), { BENCH_DATA_DIR: dataDir }, 120_000);
    const copyFrom = join(dataDir, "bench.sqlite");
    [floor, materializing, coalescing] = await Promise.all([
      spawnServer(fixture("raw-point-read.ts"), {
        BENCH_DATA_DIR: tempDir("point-floor-raw-"),
        BENCH_COPY_FROM: copyFrom,
      }),
      spawnServer(fixture("raw-point-read.ts"), {
        BENCH_DATA_DIR: tempDir("point-floor-parsed-"),
        BENCH_COPY_FROM: copyFrom,
        BENCH_MATERIALIZE: "1",
      }),
      spawnServer(fixture("raw-point-read.ts"), {
        BENCH_DATA_DIR: tempDir("point-floor-coalesced-"),
        BENCH_COPY_FROM: copyFrom,
        BENCH_MATERIALIZE: "1",
        BENCH_COALESCE: "1",
      }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([ours?.stop(), floor?.stop(), materializing?.stop(), coalescing?.stop()]);
  });

  it("answers the bytes our server answers", async () => {
    const bodies = [
      ...pointReadBodies(8),
      JSON.stringify({ path: "items:byKey", args: { key: keyFor(SEED_COUNT - 1) } }),
      JSON.stringify({ path: "items:byKey", args: { key: "no-such-key" } }),
    ];
    for (const body of bodies) {
      const [a, b, c, d] = [
        await ask(ours.url, body),
        await ask(floor.url, body),
        await ask(materializing.url, body),
        await ask(coalescing.url, body),
      ];
      expect(a.status).toBe(200);
      expect(b).toEqual(a);
      expect(c).toEqual(a);
      expect(d).toEqual(a);
    }
    expect(JSON.parse((await ask(ours.url, bodies[8])).body).value.key).toBe(keyFor(SEED_COUNT - 1));
    expect(JSON.parse((await ask(ours.url, bodies[9])).body).value).toBeNull();
  });
});
