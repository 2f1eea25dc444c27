/**
 * PostgreSQL throughput (issue 15, item 3): the same app (`fixtures/postgres-app.ts`, RS256 tokens
 * checked against a session document) served once on a throwaway PostgreSQL server and once on a
 * SQLite file, next to the Hono hello-world, each in its own process, in one run.
 *
 * 1. Authenticated `POST /api/query` (`bench:me`, a cached token): autocannon against the three
 *    servers and the read's floor (`fixtures/raw-pg-read.ts`: `node:http` + `pg` on the same
 *    database, the engine's statements in its transaction mode, the same answer), rounds
 *    interleaved; throughput, median of the per-round ratios, and the server's CPU time per request
 *    (from `/proc`, which the shared machine's load does not inflate).
 * 2. Single-insert mutation, in-process (`runMutation("bench:post")`, one call at a time) on both
 *    engines, interleaved rounds: median latency and this process's CPU time per insert
 *    (PostgreSQL's own backend processes not included).
 * 3. Authenticated point read, in-process (`runQuery("bench:me")` with a cached token, one call at
 *    a time) on both engines, interleaved rounds: median latency, mostly PostgreSQL round trips
 *    (docs/decisions.md 36), and this process's CPU time per read.
 */
import { fileURLToPath } from "node:url";
import { BackendRuntime } from "../src/backend/runtime.ts";
import { openEngine } from "../src/backend/storage/open.ts";
import { authConfig, modules, schema } from "./fixtures/postgres-app.ts";
import { callFunction } from "./lib/api-call.ts";
import { LOAD_DEFAULTS, runLoad } from "./lib/load.ts";
import { startBenchPostgres } from "./lib/postgres-db.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { type ServerLoad, withServerCpu } from "./lib/server-load.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, formatRatio, interleave, median, summarize } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const ISSUER = "https://bench.pg-throughput.test";
const AUDIENCE = "bench-pg-throughput";
const ROUNDS = 3;
const WARMUP_SEC = 1;
const INSERT_ROUNDS = 5;
const INSERTS = 1_000;
const READ_ROUNDS = 5;
const READS = 2_000;
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export const pgThroughput: BenchGroup = {
  title:
    "PostgreSQL throughput: authenticated /api/query on PostgreSQL vs its node-postgres floor vs SQLite vs Hono, single inserts",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const pgUrl = await startBenchPostgres(ctx);
    const sqliteUrl = `${await ctx.tempDir("bench-pg-throughput-")}/bench.sqlite`;
    const { jwk, sign } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE };

    ctx.log("starting the app on PostgreSQL, its floor, the app on SQLite, and the Hono hello-world");
    const postgres = await spawnServer(fixture("postgres-server.ts"), { ...env, DATABASE_URL: pgUrl });
    const servers = {
      postgres,
      // After `postgres`: the floor reads the tables that instance migrated.
      floor: await spawnServer(fixture("raw-pg-read.ts"), { ...env, DATABASE_URL: pgUrl }),
      sqlite: await spawnServer(fixture("postgres-server.ts"), { ...env, DATABASE_URL: sqliteUrl }),
      hello: await spawnServer(fixture("hono-hello.ts")),
    };
    for (const server of Object.values(servers)) ctx.defer(() => server.stop());

    const meBody = JSON.stringify({ path: "bench:me", args: {} });
    const tokenFor = async (server: SpawnedServer) => {
      const { userId, sessionId } = await callFunction(server.url, "mutation", "bench:createSession", {});
      const token = await sign(userId, sessionId);
      const me = await callFunction(server.url, "query", "bench:me", {}, token);
      if (me?.name !== "bench") throw new Error(`bench:me on ${server.url} answered ${JSON.stringify(me)}`);
      return token;
    };
    const pgToken = await tokenFor(servers.postgres);
    const tokens = { postgres: pgToken, floor: pgToken, sqlite: await tokenFor(servers.sqlite) };
    // The same user, session and token as on our PostgreSQL instance: the same document read.
    const [ourAnswer, floorAnswer] = await Promise.all(
      (["postgres", "floor"] as const).map(async (name) =>
        (
          await fetch(`${servers[name].url}/api/query`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${pgToken}` },
            body: meBody,
          })
        ).text(),
      ),
    );
    if (floorAnswer !== ourAnswer) throw new Error(`the floor answered ${floorAnswer}, ours ${ourAnswer}`);
    const query = (engine: "postgres" | "floor" | "sqlite") => (durationSec: number) =>
      runLoad({
        url: `${servers[engine].url}/api/query`,
        method: "POST",
        bodies: [meBody],
        headers: { authorization: `Bearer ${tokens[engine]}` },
        durationSec,
      });
    const targets = {
      postgres: query("postgres"),
      floor: query("floor"),
      sqlite: query("sqlite"),
      hello: (durationSec: number) => runLoad({ url: `${servers.hello.url}/`, durationSec }),
    };
    ctx.log("warming up");
    for (const run of Object.values(targets)) await run(WARMUP_SEC);
    ctx.log(`measuring ${ROUNDS} interleaved rounds of ${LOAD_DEFAULTS.durationSec} s per target`);
    const results = await interleave<ServerLoad>(ROUNDS, {
      postgres: () => withServerCpu(servers.postgres.pid, () => targets.postgres(LOAD_DEFAULTS.durationSec)),
      floor: () => withServerCpu(servers.floor.pid, () => targets.floor(LOAD_DEFAULTS.durationSec)),
      sqlite: () => withServerCpu(servers.sqlite.pid, () => targets.sqlite(LOAD_DEFAULTS.durationSec)),
      hello: () => withServerCpu(servers.hello.pid, () => targets.hello(LOAD_DEFAULTS.durationSec)),
    });
    for (const server of Object.values(servers)) await server.stop();

    // 2. Single inserts in this process, both engines, interleaved.
    ctx.log(`single inserts: ${INSERT_ROUNDS} interleaved rounds of ${INSERTS} per engine`);
    const backends: Record<"postgres" | "sqlite", BackendRuntime> = {} as never;
    for (const [name, url] of [
      ["postgres", pgUrl],
      ["sqlite", sqliteUrl],
    ] as const) {
      const backend = new BackendRuntime({
        schema,
        modules,
        engine: openEngine(url),
        auth: authConfig(jwk, ISSUER, AUDIENCE),
      });
      await backend.start();
      ctx.defer(() => backend.close());
      backends[name] = backend;
    }
    let n = 0;
    const inserts = (backend: BackendRuntime) => async () => {
      const samples: number[] = [];
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < INSERTS; i++) {
        const t0 = process.hrtime.bigint();
        await backend.runMutation("bench:post", { channel: "inserts", body: `insert ${n++}` });
        samples.push(Number(process.hrtime.bigint() - t0));
      }
      const cpu = process.cpuUsage(cpu0);
      return { samples, cpuPerInsertNs: ((cpu.user + cpu.system) * 1_000) / INSERTS };
    };
    for (const backend of Object.values(backends)) await inserts(backend)();
    const insertRounds = await interleave(INSERT_ROUNDS, {
      postgres: inserts(backends.postgres),
      sqlite: inserts(backends.sqlite),
    });

    // 3. Authenticated point reads in this process, both engines, interleaved.
    ctx.log(`authenticated point reads: ${READ_ROUNDS} interleaved rounds of ${READS} per engine`);
    const readerToken = async (backend: BackendRuntime) => {
      const { value } = await backend.runMutation("bench:createSession", {});
      const { userId, sessionId } = value as { userId: string; sessionId: string };
      return sign(userId, sessionId);
    };
    const reads = (backend: BackendRuntime, token: string) => async () => {
      const samples: number[] = [];
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < READS; i++) {
        const t0 = process.hrtime.bigint();
        const { value } = await backend.runQuery("bench:me", {}, { token });
        samples.push(Number(process.hrtime.bigint() - t0));
        if ((value as { name?: string } | null)?.name !== "bench")
          throw new Error("bench:me answered no user");
      }
      const cpu = process.cpuUsage(cpu0);
      return { samples, cpuPerReadNs: ((cpu.user + cpu.system) * 1_000) / READS };
    };
    const readers = {
      postgres: reads(backends.postgres, await readerToken(backends.postgres)),
      sqlite: reads(backends.sqlite, await readerToken(backends.sqlite)),
    };
    for (const run of Object.values(readers)) await run();
    const readRounds = await interleave(READ_ROUNDS, readers);

    const rps = (name: keyof typeof targets) => median(results[name].map((r) => r.load.requestsPerSec));
    const cpu = (name: keyof typeof targets) => median(results[name].map((r) => r.cpuPerRequestNs));
    const ratio = (a: keyof typeof targets, b: keyof typeof targets) =>
      median(results[a].map((r, i) => r.load.requestsPerSec / results[b][i].load.requestsPerSec));
    // CPU per request of a against b, paired round by round like the throughput ratios.
    const cpuRatio = (a: keyof typeof targets, b: keyof typeof targets) =>
      median(results[a].map((r, i) => r.cpuPerRequestNs / results[b][i].cpuPerRequestNs));
    const pgVsFloor = ratio("postgres", "floor");
    const pgCpuVsFloor = cpuRatio("postgres", "floor");
    const pgVsSqlite = ratio("postgres", "sqlite");
    const latency = (name: keyof typeof targets) => {
      const ms = median(results[name].map((r) => r.load.latencyP50Ms));
      return ms < 1 ? "< 1 ms" : `${ms} ms`;
    };
    const insertSummary = (name: "postgres" | "sqlite") =>
      summarize(insertRounds[name].flatMap((r) => r.samples));
    const insertCpu = (name: "postgres" | "sqlite") =>
      median(insertRounds[name].map((r) => r.cpuPerInsertNs));
    const readSummary = (name: "postgres" | "sqlite") =>
      summarize(readRounds[name].flatMap((r) => r.samples));
    const readCpu = (name: "postgres" | "sqlite") => median(readRounds[name].map((r) => r.cpuPerReadNs));
    const pgRead = readSummary("postgres");
    const sqliteRead = readSummary("sqlite");
    const pgInsert = insertSummary("postgres");
    const sqliteInsert = insertSummary("sqlite");
    const settings = `${LOAD_DEFAULTS.connections} connections, ${ROUNDS}×${LOAD_DEFAULTS.durationSec} s interleaved`;
    return [
      {
        benchmark: "Authenticated `POST /api/query` (bench:me, cached token) on PostgreSQL",
        result: `${formatCount(rps("postgres"))} req/s`,
        p50: latency("postgres"),
        note: `server CPU ${formatNs(cpu("postgres"))}/request (PostgreSQL's processes not included); ${settings}`,
      },
      {
        benchmark: "Floor: `node:http` + `pg`, the same read in the engine's transaction, same answer",
        result: `${formatCount(rps("floor"))} req/s`,
        p50: latency("floor"),
        note: `the same database, token and document; BEGIN REPEATABLE READ READ ONLY with the log head, the prepared read, COMMIT, one round trip; server CPU ${formatNs(cpu("floor"))}/request`,
      },
      {
        benchmark: "Same app on SQLite",
        result: `${formatCount(rps("sqlite"))} req/s`,
        p50: latency("sqlite"),
        note: `server CPU ${formatNs(cpu("sqlite"))}/request`,
      },
      {
        benchmark: "Hono hello-world `GET /` (reference)",
        result: `${formatCount(rps("hello"))} req/s`,
        p50: latency("hello"),
        note: `server CPU ${formatNs(cpu("hello"))}/request`,
      },
      {
        benchmark: "ratio: PostgreSQL ÷ its floor (throughput)",
        result: formatRatio(pgVsFloor),
        goal: "≥ 70%",
        ok: pgVsFloor >= 0.7,
        note: "median of per-round ratios",
      },
      {
        benchmark: "ratio: PostgreSQL ÷ its floor (server CPU per request)",
        result: `${pgCpuVsFloor.toFixed(2)}×`,
        note: `medians ${formatNs(cpu("postgres"))} vs ${formatNs(cpu("floor"))}; PostgreSQL's own processes in neither`,
      },
      {
        benchmark: "ratio: PostgreSQL ÷ SQLite",
        result: formatRatio(pgVsSqlite),
        goal: "≥ 60%",
        ok: pgVsSqlite >= 0.6,
        note: "median of per-round ratios",
      },
      {
        benchmark: "ratio: PostgreSQL ÷ hello-world",
        result: formatRatio(ratio("postgres", "hello")),
        note: `SQLite ÷ hello-world: ${formatRatio(ratio("sqlite", "hello"))}`,
      },
      {
        benchmark: 'Authenticated point read on PostgreSQL (in-process `runQuery("bench:me")`, cached token)',
        result: `${formatNs(pgRead.p50)} median`,
        p50: formatNs(pgRead.p50),
        p99: formatNs(pgRead.p99),
        note: `${pgRead.n} reads one at a time; ${formatNs(readCpu("postgres"))} CPU/read in this process (PostgreSQL's own not included)`,
      },
      {
        benchmark: "Authenticated point read on SQLite (same run)",
        result: `${formatNs(sqliteRead.p50)} median`,
        p50: formatNs(sqliteRead.p50),
        p99: formatNs(sqliteRead.p99),
        note: `${formatNs(readCpu("sqlite"))} CPU/read`,
      },
      {
        benchmark: "Single-insert mutation on PostgreSQL (in-process `runMutation`)",
        result: `${formatNs(pgInsert.p50)} median`,
        p50: formatNs(pgInsert.p50),
        p99: formatNs(pgInsert.p99),
        note: `${pgInsert.n} inserts one at a time; ${formatNs(insertCpu("postgres"))} CPU/insert in this process (PostgreSQL's own not included)`,
      },
      {
        benchmark: "Single-insert mutation on SQLite (same run)",
        result: `${formatNs(sqliteInsert.p50)} median`,
        p50: formatNs(sqliteInsert.p50),
        p99: formatNs(sqliteInsert.p99),
        note: `${formatNs(insertCpu("sqlite"))} CPU/insert; PostgreSQL ÷ SQLite median latency ${(pgInsert.p50 / sqliteInsert.p50).toFixed(1)}×`,
      },
    ];
  },
};
