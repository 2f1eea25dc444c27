/**
 * The counts of `npm run bench -- pg-writes` (bench/lib/pg-counts.ts) must name what our
 * `bench:post` mutation sends PostgreSQL: one write transaction's statements per mutation, each
 * under its kind (a renamed statement would otherwise be counted as another, or lost among the
 * unnamed), the NOTIFY messages announcing the commits, and the server process's context switches
 * and syscalls.
 */
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  countsSnapshot,
  installStatementStats,
  perMutation,
  STATEMENT_STATS_SETTINGS,
} from "../../bench/lib/pg-counts.ts";
import { rs256Tokens } from "../../bench/lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "../../bench/lib/spawn.ts";
import { postgresBinDir, startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

const ISSUER = "https://counts.test";
const AUDIENCE = "counts-test";
const MUTATIONS = 20;

describe.skipIf(!postgresBinDir)("pg-writes counts per mutation", () => {
  let server: TestPostgres;
  let stats: pg.Client;
  let ours: SpawnedServer;

  beforeAll(async () => {
    server = await startPostgres([...STATEMENT_STATS_SETTINGS]);
    const url = await server.createDatabase();
    stats = new pg.Client({ connectionString: url });
    await stats.connect();
    await installStatementStats(stats);
    const { jwk } = await rs256Tokens(ISSUER, AUDIENCE);
    ours = await spawnServer(
      fileURLToPath(new URL("../../bench/fixtures/postgres-server.ts", import.meta.url)),
      { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE, DATABASE_URL: url },
    );
  }, 120_000);

  afterAll(async () => {
    await ours?.stop();
    await stats?.end();
    await server?.stop();
  });

  it("names each statement of a mutation's transaction once per mutation, and its NOTIFY message", async () => {
    const pids = { loaded: [ours.pid], idle: [] };
    const before = await countsSnapshot(stats, pids);
    for (let i = 0; i < MUTATIONS; i++) {
      const response = await fetch(`${ours.url}/api/mutation`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path: "bench:post", args: { channel: "counts", body: `message ${i}` } }),
      });
      expect(response.status).toBe(200);
    }
    // The NOTIFY of the last commit goes out after its answer.
    const counts = await eventually(async () => {
      const c = perMutation(before, await countsSnapshot(stats, pids), MUTATIONS);
      expect(c.statements.get("NOTIFY statement")?.[1]).toBeGreaterThanOrEqual(1);
      return c;
    });
    // The instance's own background writes (its heartbeat) may add a few, never one per mutation.
    for (const kind of ["BEGIN (write)", "SET LOCAL (write)", "document insert", "log append", "COMMIT"]) {
      const [calls] = counts.statements.get(kind) ?? [0, 0];
      expect(calls, kind).toBeGreaterThanOrEqual(1);
      expect(calls, kind).toBeLessThan(1.5);
    }
    // One message per commit; statements carry one or more.
    const [notifyStatements, messages] = counts.statements.get("NOTIFY statement")!;
    expect(messages).toBeLessThan(1.5);
    expect(notifyStatements).toBeLessThanOrEqual(messages);
    // No statement of the write path goes unnamed (an unknown kind keeps its own text).
    const unnamed = [...counts.statements.keys()].filter((k) =>
      /^(INSERT |BEGIN ISOLATION|SET LOCAL service|SELECT pg_notify)/i.test(k),
    );
    expect(unnamed).toEqual([]);
    expect(counts.loaded.cpuNs).toBeGreaterThan(0);
    expect(counts.loaded.voluntary).toBeGreaterThan(0);
    expect(counts.loaded.syscalls).toBeGreaterThan(0);
  }, 60_000);
});
