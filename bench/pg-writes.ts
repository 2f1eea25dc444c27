/**
 * Writes on a durable PostgreSQL (issue 24, item 1): fsync and synchronous_commit on, as in
 * production, so a commit costs what it costs there and commits that queue on one lock show.
 *
 * 1. pgbench on the same server with the same single-row insert transaction, 32 clients: the
 *    database's own limit on this machine, in this run.
 * 2. The bench app's single-insert mutation (`bench:post`, `fixtures/postgres-app.ts`) over HTTP,
 *    32 connections: on a SQLite file (the reference), on PostgreSQL with one, two and three
 *    instances (the connections spread over them; each process is first warmed alone under the
 *    whole load, so each of three gets the warm-up one gets). The servers' CPU time per mutation
 *    comes from `/proc`, summed over the instances; rollbacks per commit (retried transactions,
 *    from `pg_stat_database`); and the transactions waiting for a lock, sampled every 10 ms while
 *    the load runs.
 * 3. The floor (`fixtures/raw-pg-write.ts`: `node:http` and `pg` sending our transaction's
 *    statements, nothing of ours) as one process and as three, under the same load: if three
 *    processes of the floor lose against one on this machine, that bounds what three instances can
 *    reach here, whatever the platform does.
 * 4. In-process: what another instance's commit costs an instance that reads nothing of its table,
 *    its write set parsed (a payload without the table header) or skipped (`lib/announced-commit.ts`).
 *
 * Each configuration runs once per round, the rounds interleaved (`BENCH_PG_WRITES_ROUNDS`, default
 * 3, of `BENCH_PG_WRITES_SEC` seconds each, default 5); figures are medians over the rounds, the
 * goals' ratios medians of per-round ratios.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { postgresBinDir } from "../test/helpers/postgres.ts";
import { announcedCommitCost } from "./lib/announced-commit.ts";
import { type LoadResult, runLoad } from "./lib/load.ts";
import { startBenchPostgres } from "./lib/postgres-db.ts";
import { processCpuNs } from "./lib/proc.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, formatRatio, interleave, median } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const ISSUER = "https://bench.pg-writes.test";
const AUDIENCE = "bench-pg-writes";
const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_PG_WRITES_SEC ?? 5);
const ROUNDS = Number(process.env.BENCH_PG_WRITES_ROUNDS ?? 3);
const WARMUP_SEC = 2;
const fixture = fileURLToPath(new URL("./fixtures/postgres-server.ts", import.meta.url));
const floorFixture = fileURLToPath(new URL("./fixtures/raw-pg-write.ts", import.meta.url));
const run = promisify(execFile);

/** The figures of one HTTP load against one or more instances. */
interface WriteLoad {
  mutationsPerSec: number;
  p50Ms: number;
  /** Server CPU time per mutation, all instances together. */
  cpuPerMutationNs: number;
  /** PostgreSQL transactions rolled back per committed one (retries after conflicts); SQLite: undefined. */
  rollbacksPerCommit?: number;
  /** Mean number of transactions waiting for a lock (sampled). */
  lockWaiters?: number;
}

/** Each figure's median over the rounds. */
function medianLoad(rounds: WriteLoad[]): WriteLoad {
  const of = (pick: (r: WriteLoad) => number | undefined) => {
    const values = rounds.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? median(values) : undefined;
  };
  return {
    mutationsPerSec: median(rounds.map((r) => r.mutationsPerSec)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    cpuPerMutationNs: median(rounds.map((r) => r.cpuPerMutationNs)),
    rollbacksPerCommit: of((r) => r.rollbacksPerCommit),
    lockWaiters: of((r) => r.lockWaiters),
  };
}

/** `pg_stat_database` counters of the database at `url`. */
async function xactCounts(client: pg.Client): Promise<{ commits: number; rollbacks: number }> {
  // The statistics are flushed by each backend at most once a second: read a fresh view.
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query(
    "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()",
  );
  return { commits: Number(rows[0].xact_commit), rollbacks: Number(rows[0].xact_rollback) };
}

/** Samples, every 10 ms until `stop` resolves, how many backends wait for a lock; returns the mean. */
async function sampleLockWaiters(client: pg.Client, stop: Promise<unknown>): Promise<number> {
  let done = false;
  void stop.finally(() => (done = true));
  let samples = 0;
  let waiting = 0;
  while (!done) {
    const { rows } = await client.query("SELECT count(*) AS n FROM pg_locks WHERE NOT granted");
    waiting += Number(rows[0].n);
    samples++;
    await new Promise((r) => setTimeout(r, 10));
  }
  return samples ? waiting / samples : 0;
}

/** `bench:post` over HTTP, {@link CONNECTIONS} connections spread over `servers`, for `seconds`. */
async function postLoad(servers: SpawnedServer[], seconds: number, tag: string): Promise<LoadResult[]> {
  const bodies = Array.from({ length: 16 }, (_, i) =>
    JSON.stringify({ path: "bench:post", args: { channel: tag, body: `${tag} message ${i}` } }),
  );
  return Promise.all(
    servers.map((server, i) =>
      runLoad({
        url: `${server.url}/api/mutation`,
        method: "POST",
        bodies,
        connections: Math.floor(CONNECTIONS / servers.length) + (i < CONNECTIONS % servers.length ? 1 : 0),
        durationSec: seconds,
      }),
    ),
  );
}

async function measure(servers: SpawnedServer[], tag: string, stats?: pg.Client): Promise<WriteLoad> {
  // Each process first alone under the whole load, then all together: every one of three gets as
  // many warm-up requests as one instance does. With one shared 2 s warm-up each of three got a
  // third of them and was still compiling when the measurement began (docs/decisions.md 35).
  if (servers.length > 1)
    for (const [i, server] of servers.entries()) await postLoad([server], WARMUP_SEC, `${tag}-warmup-${i}`);
  await postLoad(servers, WARMUP_SEC, `${tag}-warmup`);
  const cpu0 = servers.map((s) => processCpuNs(s.pid));
  const before = stats ? await xactCounts(stats) : undefined;
  const loading = postLoad(servers, SECONDS, tag);
  const waiters = stats ? sampleLockWaiters(stats, loading) : undefined;
  const results = await loading;
  const lockWaiters = await waiters;
  const completed = results.reduce((n, r) => n + r.completed, 0);
  const cpu = servers.reduce((sum, s, i) => sum + processCpuNs(s.pid) - cpu0[i], 0);
  let rollbacksPerCommit: number | undefined;
  if (stats && before) {
    // Let every backend flush its counters (at most once a second).
    await new Promise((r) => setTimeout(r, 1500));
    const after = await xactCounts(stats);
    rollbacksPerCommit = (after.rollbacks - before.rollbacks) / Math.max(1, completed);
  }
  return {
    mutationsPerSec: results.reduce((n, r) => n + r.requestsPerSec, 0),
    p50Ms: Math.max(...results.map((r) => r.latencyP50Ms)),
    cpuPerMutationNs: cpu / completed,
    rollbacksPerCommit,
    lockWaiters,
  };
}

/** pgbench's transactions per second for a single-row insert, {@link CONNECTIONS} clients. */
async function pgbench(ctx: BenchContext, url: string, seconds: number): Promise<number> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(
    "CREATE TABLE IF NOT EXISTS pgbench_messages (id BIGSERIAL PRIMARY KEY, channel TEXT NOT NULL, body TEXT NOT NULL)",
  );
  await setup.query("CREATE INDEX IF NOT EXISTS pgbench_messages_channel ON pgbench_messages (channel)");
  await setup.end();
  const dir = await ctx.tempDir("bench-pg-writes-");
  const script = `${dir}/insert.sql`;
  await writeFile(
    script,
    "INSERT INTO pgbench_messages (channel, body) VALUES ('pgbench', 'pgbench message');\n",
  );
  const bin = postgresBinDir ? `${postgresBinDir}/pgbench` : "pgbench";
  const { stdout } = await run(
    bin,
    ["-n", "-M", "prepared", "-c", String(CONNECTIONS), "-j", "2", "-T", String(seconds), "-f", script, url],
    { maxBuffer: 1 << 20 },
  );
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1];
  if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
  return Number(tps);
}

export const pgWrites: BenchGroup = {
  title:
    "PostgreSQL writes (durable): single-insert mutations, 1, 2 and 3 instances vs pgbench, SQLite and the floor",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const pgUrl = await startBenchPostgres(ctx, { durable: true });
    const sqliteUrl = `${await ctx.tempDir("bench-pg-writes-")}/bench.sqlite`;
    const { jwk } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE };
    const stats = new pg.Client({ connectionString: pgUrl });
    await stats.connect();
    ctx.defer(() => stats.end());

    ctx.log(`pgbench: single-row insert, ${CONNECTIONS} clients, ${SECONDS} s`);
    const pgbenchTps = await pgbench(ctx, pgUrl, SECONDS);

    const start = async (count: number, url: string, script = fixture) => {
      const servers: SpawnedServer[] = [];
      for (let i = 0; i < count; i++) {
        const server = await spawnServer(script, { ...env, DATABASE_URL: url });
        ctx.defer(() => server.stop());
        servers.push(server);
      }
      return servers;
    };
    const stopAll = async (servers: SpawnedServer[]) => {
      for (const server of servers) await server.stop();
    };

    /** One configuration's measurement: its processes started, loaded, stopped. */
    const config =
      (what: string, count: number, url: string, tag: string, script = fixture, withStats = true) =>
      async (round: number) => {
        ctx.log(`round ${round + 1}: ${what}, ${CONNECTIONS} connections, ${SECONDS} s`);
        const servers = await start(count, url, script);
        try {
          return await measure(servers, tag, withStats ? stats : undefined);
        } finally {
          await stopAll(servers);
        }
      };
    // Round by round, each configuration in turn (the order rotating): the ratios pair figures
    // measured minutes apart at most, which one run of each could not on a machine whose speed
    // drifts (single runs put one instance at 29–53 % of SQLite on the same day).
    const rounds = await interleave(ROUNDS, {
      sqlite: config("SQLite, 1 process", 1, sqliteUrl, "sqlite", fixture, false),
      one: config("PostgreSQL, 1 instance", 1, pgUrl, "one"),
      two: config("PostgreSQL, 2 instances", 2, pgUrl, "two"),
      three: config("PostgreSQL, 3 instances", 3, pgUrl, "three"),
      // The floor writes to the tables our instances migrated.
      floorOne: config("floor (node:http + pg), 1 process", 1, pgUrl, "floor-one", floorFixture),
      floorThree: config("floor (node:http + pg), 3 processes", 3, pgUrl, "floor-three", floorFixture),
    });
    const [sqlite, one, two, three, floorOne, floorThree] = [
      rounds.sqlite,
      rounds.one,
      rounds.two,
      rounds.three,
      rounds.floorOne,
      rounds.floorThree,
    ].map(medianLoad);
    /** The median over the rounds of `a ÷ b`, each round's figures paired. */
    const ratio = (a: WriteLoad[], b: WriteLoad[]) =>
      median(a.map((r, i) => r.mutationsPerSec / b[i].mutationsPerSec));
    const oneOfSqlite = ratio(rounds.one, rounds.sqlite);
    const threeOfOne = ratio(rounds.three, rounds.one);
    const floorThreeOfOne = ratio(rounds.floorThree, rounds.floorOne);

    ctx.log("another instance's commit, in-process: parsed vs skipped");
    const announced = announcedCommitCost();

    const note = (r: WriteLoad) =>
      [
        `server CPU ${formatNs(r.cpuPerMutationNs)}/mutation (all processes summed)`,
        r.rollbacksPerCommit !== undefined ? `${r.rollbacksPerCommit.toFixed(3)} rollbacks/commit` : "",
        r.lockWaiters !== undefined ? `${r.lockWaiters.toFixed(2)} lock waiters (mean)` : "",
      ]
        .filter(Boolean)
        .join("; ");
    const settings = `${CONNECTIONS} connections; medians of ${ROUNDS} interleaved rounds of ${SECONDS} s`;
    return [
      {
        benchmark: "pgbench: the same single-row insert transaction, 32 clients",
        result: `${formatCount(pgbenchTps)} tx/s`,
        note: "the database's own limit here (fsync and synchronous_commit on)",
      },
      {
        benchmark: "`bench:post` over HTTP on SQLite, 1 process (reference)",
        result: `${formatCount(sqlite.mutationsPerSec)} mutations/s`,
        p50: `${sqlite.p50Ms} ms`,
        note: `${note(sqlite)}; ${settings}`,
      },
      {
        benchmark: "`bench:post` over HTTP on PostgreSQL, 1 instance",
        result: `${formatCount(one.mutationsPerSec)} mutations/s`,
        p50: `${one.p50Ms} ms`,
        goal: "≥ 40% of SQLite",
        ok: oneOfSqlite >= 0.4,
        note: `${formatRatio(one.mutationsPerSec / pgbenchTps)} of pgbench, ${formatRatio(oneOfSqlite)} of SQLite (median of per-round ratios); ${note(one)}`,
      },
      {
        benchmark: "`bench:post` over HTTP on PostgreSQL, 2 instances",
        result: `${formatCount(two.mutationsPerSec)} mutations/s`,
        p50: `${two.p50Ms} ms`,
        note: `${formatRatio(two.mutationsPerSec / pgbenchTps)} of pgbench, ${formatRatio(two.mutationsPerSec / one.mutationsPerSec)} of 1 instance; ${note(two)}`,
      },
      {
        benchmark: "`bench:post` over HTTP on PostgreSQL, 3 instances",
        result: `${formatCount(three.mutationsPerSec)} mutations/s`,
        p50: `${three.p50Ms} ms`,
        goal: "≥ 1 instance",
        ok: threeOfOne >= 1,
        note: `${formatRatio(three.mutationsPerSec / pgbenchTps)} of pgbench, ${formatRatio(threeOfOne)} of 1 instance (median of per-round ratios; the floor: ${formatRatio(floorThreeOfOne)}); ${note(three)}`,
      },
      {
        benchmark: "floor: `node:http` + `pg`, our transaction's statements, 1 process",
        result: `${formatCount(floorOne.mutationsPerSec)} mutations/s`,
        p50: `${floorOne.p50Ms} ms`,
        note: `ours with 1 instance is ${formatRatio(one.mutationsPerSec / floorOne.mutationsPerSec)} of it; ${note(floorOne)}`,
      },
      {
        benchmark: "floor: the same, 3 processes",
        result: `${formatCount(floorThree.mutationsPerSec)} mutations/s`,
        p50: `${floorThree.p50Ms} ms`,
        note: `floor 3 ÷ 1 ${formatRatio(floorThreeOfOne)}, ours 3 ÷ 1 ${formatRatio(threeOfOne)}; CPU per mutation 3 ÷ 1 process: floor ${(floorThree.cpuPerMutationNs / floorOne.cpuPerMutationNs).toFixed(2)}×, ours ${(three.cpuPerMutationNs / one.cpuPerMutationNs).toFixed(2)}×; ${note(floorThree)}`,
      },
      {
        benchmark: "another instance's commit, nothing here reads its table: delivered (in-process)",
        result: `${formatNs(announced.skippedNs)}/commit`,
        note: `${formatNs(announced.parsedNs)} with its write set parsed (a payload without the table header, as before); \`bench:post\`'s write set; with 3 instances each hears 2 per own commit`,
      },
    ];
  },
};
