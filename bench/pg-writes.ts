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
 *    comes from `/proc`, summed over the instances, as user time (their own code) and system
 *    time (the kernel's on their behalf): against the floor's (item 3) it bounds what three
 *    instances can cost per mutation here; rollbacks per commit (retried transactions,
 *    from `pg_stat_database`); and the transactions waiting for a lock, sampled every 10 ms while
 *    the load runs.
 * 3. The floor (`fixtures/raw-pg-write.ts`: `node:http` and `pg` sending our transaction's
 *    statements, nothing of ours) as one process and as three, under the same load: if three
 *    processes of the floor lose against one on this machine, that bounds what three instances can
 *    reach here, whatever the platform does.
 * 4. In-process: what another instance's commit costs an instance that reads nothing of its table,
 *    its write set parsed (a payload without the table header) or skipped (`lib/announced-commit.ts`).
 * 5. Counts per mutation, which a loaded machine changes far less than CPU and wall time
 *    (`lib/pg-counts.ts`, issue 48): statements by kind (`pg_stat_statements`, preloaded on this
 *    server), NOTIFY statements and the messages they carry, the followers' log reads and the rows
 *    they read back, and of the servers and of PostgreSQL's processes: context switches and
 *    read/write syscalls; where `perf` can count syscall tracepoints, the servers' event-loop turns
 *    (epoll waits) and all their syscalls (`BENCH_PG_WRITES_PERF=0`: not counted, for runs whose
 *    CPU figures must not carry the tracepoints' small cost per syscall).
 * 6. The CPU an instance spends on the others' commits (issue 48, item 2): 2 and 3 instances, the
 *    whole load on one, the others only following it; a follower's CPU per commit it hears, less
 *    what it spends with nothing to follow (measured before the load), beside the CPU per mutation.
 * 7. With `BENCH_PG_WRITES_PROFILE=1`: where the loaded servers' CPU goes, by module of ours
 *    (`lib/cpu-by-module.ts`: `perf record`, each sample charged to the deepest frame of ours),
 *    per mutation, a row per configuration. The servers then run with `--perf-basic-prof` and are
 *    sampled, which costs them a little: that run's throughput is not the one to quote.
 *
 * What the counts showed (docs/scale-out.md "The cost of N instances"): 1 → 3 instances add a few
 * hundredths of a statement per mutation (NOTIFY statements, each waking every instance), no
 * syscalls, ±0.1 event-loop turns; a follower spends about 8 µs per commit heard on a quiet machine
 * (2 per mutation with 3 instances), 21 µs on a loaded one. Before issue 48 it spent 39–60
 * µs, reading back from the log 0.44 of the commits its hints had carried: a missing number waited
 * 10 ms for its hint, which another instance sends up to 20 ms later (now 30 ms, once per gap,
 * `commit-log/follower.ts`; 5.53 statements per mutation with 3 instances then, 5.20 now).
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
import {
  type CpuByModule,
  PERF_NODE_OPTIONS,
  profileCpuByModule,
  removePerfMap,
} from "./lib/cpu-by-module.ts";
import { type LoadResult, runLoad } from "./lib/load.ts";
import {
  type Counts,
  countLoopTurns,
  countsSnapshot,
  formatProcesses,
  formatStatements,
  installStatementStats,
  medianCounts,
  perMutation,
  processOnCpuNs,
  STATEMENT_STATS_SETTINGS,
} from "./lib/pg-counts.ts";
import { startBenchPostgresServer } from "./lib/postgres-db.ts";
import { processCpuSplitNs } from "./lib/proc.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, formatRatio, interleave, median } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const ISSUER = "https://bench.pg-writes.test";
const AUDIENCE = "bench-pg-writes";
const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_PG_WRITES_SEC ?? 5);
const ROUNDS = Number(process.env.BENCH_PG_WRITES_ROUNDS ?? 3);
const PROFILE = process.env.BENCH_PG_WRITES_PROFILE === "1";
/**
 * Warm-up of every configuration under the whole load before it is measured
 * (`BENCH_PG_WRITES_WARMUP_SEC`, default 10). After 2 s our instance was still being compiled and
 * the floor, a fraction of our code, was not: one instance spent 367–413 µs per mutation after 2 s
 * and 246–258 µs after 15 s, V8's threads 38–45 µs against 14–16 µs (the floor: 244–266 and
 * 175–203 µs), which put one instance at 68–83 % of its floor instead of 87–92 % (2026-12-07,
 * Node 26). Followers (item 6) need it as much: hearing commits is their path to compile.
 */
const WARMUP_SEC = Number(process.env.BENCH_PG_WRITES_WARMUP_SEC ?? 10);
const fixture = fileURLToPath(new URL("./fixtures/postgres-server.ts", import.meta.url));
const floorFixture = fileURLToPath(new URL("./fixtures/raw-pg-write.ts", import.meta.url));
const run = promisify(execFile);

/** The figures of one HTTP load against one or more instances. */
interface WriteLoad {
  mutationsPerSec: number;
  p50Ms: number;
  /** Server CPU time per mutation, all instances together. */
  cpuPerMutationNs: number;
  /** The part of {@link cpuPerMutationNs} in the servers' own code (user time); the rest is the kernel's. */
  userPerMutationNs: number;
  /** PostgreSQL transactions rolled back per committed one (retries after conflicts); SQLite: undefined. */
  rollbacksPerCommit?: number;
  /** Mean number of transactions waiting for a lock (sampled). */
  lockWaiters?: number;
  /** PostgreSQL: statements, context switches and syscalls per mutation (`lib/pg-counts.ts`). */
  counts?: Counts;
  /** CPU time per second of the servers that got no load, measured while none had any (their timers). */
  idleCpuNsPerSec?: number;
  /** Event-loop turns (`epoll_wait` calls) and syscalls per mutation of the loaded servers (`perf`, where usable). */
  epollWaitsPerMutation?: number;
  syscallsPerMutation?: number;
  /** With {@link PROFILE}: the loaded servers' CPU per mutation by what it was charged to, ns. */
  cpuByModule?: CpuByModule;
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
    userPerMutationNs: median(rounds.map((r) => r.userPerMutationNs)),
    rollbacksPerCommit: of((r) => r.rollbacksPerCommit),
    lockWaiters: of((r) => r.lockWaiters),
    counts: rounds.every((r) => r.counts)
      ? medianCounts(
          rounds.map((r) => r.counts!),
          median,
        )
      : undefined,
    idleCpuNsPerSec: of((r) => r.idleCpuNsPerSec),
    epollWaitsPerMutation: of((r) => r.epollWaitsPerMutation),
    syscallsPerMutation: of((r) => r.syscallsPerMutation),
    cpuByModule: rounds.every((r) => r.cpuByModule)
      ? medianByLabel(rounds.map((r) => r.cpuByModule!))
      : undefined,
  };
}

/** Each label's median over the rounds (0 in a round that charged nothing to it). */
function medianByLabel(rounds: CpuByModule[]): CpuByModule {
  const labels = new Set(rounds.flatMap((r) => [...r.keys()]));
  return new Map([...labels].map((label) => [label, median(rounds.map((r) => r.get(label) ?? 0))]));
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

/** What {@link measure} needs beyond the servers; without `stats` it counts nothing in PostgreSQL. */
interface MeasureOptions {
  stats?: pg.Client;
  postmasterPid?: number;
  /** Only the first this many servers get load; the others only follow (default all). */
  loaded?: number;
}

async function measure(
  servers: SpawnedServer[],
  tag: string,
  options: MeasureOptions = {},
): Promise<WriteLoad> {
  const { stats, postmasterPid } = options;
  const loaded = servers.slice(0, options.loaded ?? servers.length);
  const idle = servers.slice(loaded.length);
  // Each process first alone under the whole load, then all together: every one of three gets as
  // many warm-up requests as one instance does. With one shared warm-up each of three got a third
  // of them and was still compiling when the measurement began (docs/decisions.md 35).
  if (loaded.length > 1)
    for (const [i, server] of loaded.entries()) await postLoad([server], WARMUP_SEC, `${tag}-warmup-${i}`);
  await postLoad(loaded, WARMUP_SEC, `${tag}-warmup`);
  // What the followers spend with nothing to follow (heartbeats, polls, the scheduler), to be
  // taken off what they spend following.
  let idleCpuNsPerSec: number | undefined;
  if (idle.length) {
    const quiet0 = idle.reduce((sum, s) => sum + processOnCpuNs(s.pid), 0);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const quiet = idle.reduce((sum, s) => sum + processOnCpuNs(s.pid), 0) - quiet0;
    idleCpuNsPerSec = quiet / ((performance.now() - t0) / 1000);
  }
  const pids = { loaded: loaded.map((s) => s.pid), idle: idle.map((s) => s.pid), postmasterPid };
  const counts0 = stats ? await countsSnapshot(stats, pids) : undefined;
  const cpu0 = loaded.map((s) => processCpuSplitNs(s.pid));
  const before = stats ? await xactCounts(stats) : undefined;
  // perf's syscall tracepoints cost the servers a little per syscall: BENCH_PG_WRITES_PERF=0 leaves them off.
  // Not beside the profile: its tracepoints would be charged to the syscalls they count.
  const perf =
    stats && !PROFILE && process.env.BENCH_PG_WRITES_PERF !== "0"
      ? countLoopTurns(loaded.map((s) => s.pid))
      : undefined;
  const profile = PROFILE ? profileCpuByModule(loaded.map((s) => s.pid)) : undefined;
  const loading = postLoad(loaded, SECONDS, tag);
  const waiters = stats ? sampleLockWaiters(stats, loading) : undefined;
  const results = await loading;
  const lockWaiters = await waiters;
  const loop = await perf?.stop();
  const byModule = await profile?.stop();
  const completed = results.reduce((n, r) => n + r.completed, 0);
  let user = 0;
  let system = 0;
  for (const [i, server] of loaded.entries()) {
    const cpu1 = processCpuSplitNs(server.pid);
    user += cpu1.userNs - cpu0[i].userNs;
    system += cpu1.systemNs - cpu0[i].systemNs;
  }
  // Read at once: the counters must not take in the idle time after the load.
  const counts1 = stats ? await countsSnapshot(stats, pids) : undefined;
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
    cpuPerMutationNs: (user + system) / completed,
    userPerMutationNs: user / completed,
    rollbacksPerCommit,
    lockWaiters,
    counts: counts0 && counts1 ? perMutation(counts0, counts1, completed) : undefined,
    idleCpuNsPerSec,
    epollWaitsPerMutation: loop && loop.epollWaits / completed,
    syscallsPerMutation: loop && loop.syscalls / completed,
    cpuByModule: byModule && new Map([...byModule].map(([label, ns]) => [label, ns / completed])),
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
    const { url: pgUrl, postmasterPid } = await startBenchPostgresServer(ctx, {
      durable: true,
      settings: STATEMENT_STATS_SETTINGS,
    });
    const sqliteUrl = `${await ctx.tempDir("bench-pg-writes-")}/bench.sqlite`;
    const { jwk } = await rs256Tokens(ISSUER, AUDIENCE);
    const env: Record<string, string> = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE };
    if (PROFILE) env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} ${PERF_NODE_OPTIONS}`.trim();
    const stats = new pg.Client({ connectionString: pgUrl });
    await stats.connect();
    ctx.defer(() => stats.end());
    await installStatementStats(stats);

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
      for (const server of servers) {
        await server.stop();
        if (PROFILE) await removePerfMap(server.pid);
      }
    };

    /** One configuration's measurement: its processes started, loaded, stopped. */
    const config =
      (
        what: string,
        count: number,
        url: string,
        tag: string,
        script = fixture,
        withStats = true,
        loaded = count,
      ) =>
      async (round: number) => {
        ctx.log(`round ${round + 1}: ${what}, ${CONNECTIONS} connections, ${SECONDS} s`);
        const servers = await start(count, url, script);
        try {
          return await measure(servers, tag, withStats ? { stats, postmasterPid, loaded } : { loaded });
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
      // Item 2 of issue 48: the whole load on one instance, the others only following it.
      followTwo: config("PostgreSQL, 2 instances, 1 loaded", 2, pgUrl, "follow-two", fixture, true, 1),
      followThree: config("PostgreSQL, 3 instances, 1 loaded", 3, pgUrl, "follow-three", fixture, true, 1),
    });
    const [sqlite, one, two, three, floorOne, floorThree, followTwo, followThree] = [
      rounds.sqlite,
      rounds.one,
      rounds.two,
      rounds.three,
      rounds.floorOne,
      rounds.floorThree,
      rounds.followTwo,
      rounds.followThree,
    ].map(medianLoad);
    /** The median over the rounds of `a ÷ b`, each round's figures paired. */
    const ratio = (a: WriteLoad[], b: WriteLoad[]) =>
      median(a.map((r, i) => r.mutationsPerSec / b[i].mutationsPerSec));
    /** The same for CPU per mutation. */
    const cpuRatio = (a: WriteLoad[], b: WriteLoad[]) =>
      median(a.map((r, i) => r.cpuPerMutationNs / b[i].cpuPerMutationNs));
    const oneOfSqlite = ratio(rounds.one, rounds.sqlite);
    const threeOfOne = ratio(rounds.three, rounds.one);
    const floorThreeOfOne = ratio(rounds.floorThree, rounds.floorOne);
    const cpuThreeOfOne = cpuRatio(rounds.three, rounds.one);
    const floorCpuThreeOfOne = cpuRatio(rounds.floorThree, rounds.floorOne);
    // What three processes cost per mutation over one on this machine with nothing of ours between
    // them (the floor's growth, in µs, not as a ratio), added to our one instance's cost: the
    // ratio ours would show if our instances cost each other nothing at all.
    const machineBound = median(
      rounds.one.map(
        (r, i) =>
          (r.cpuPerMutationNs + rounds.floorThree[i].cpuPerMutationNs - rounds.floorOne[i].cpuPerMutationNs) /
          r.cpuPerMutationNs,
      ),
    );
    // The bound of the first goal in this run: what the floor's own process reaches of SQLite.
    const floorOfSqlite = ratio(rounds.floorOne, rounds.sqlite);

    ctx.log("another instance's commit, in-process: parsed vs skipped");
    const announced = announcedCommitCost();
    if (PROFILE && !one.cpuByModule)
      ctx.log("perf could not record (not installed or not permitted): no CPU-by-module rows");

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
        note: `${formatRatio(one.mutationsPerSec / pgbenchTps)} of pgbench, ${formatRatio(oneOfSqlite)} of SQLite (median of per-round ratios; the floor's 1 process: ${formatRatio(floorOfSqlite)} of SQLite); ${note(one)}`,
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
        goal: "3 ÷ 1 ≥ the floor's 3 ÷ 1",
        ok: threeOfOne >= floorThreeOfOne,
        note: `${formatRatio(three.mutationsPerSec / pgbenchTps)} of pgbench, ${formatRatio(threeOfOne)} of 1 instance (median of per-round ratios; the floor's 3 ÷ 1 processes: ${formatRatio(floorThreeOfOne)}); ${note(three)}`,
      },
      {
        benchmark: "server CPU per mutation, 3 instances ÷ 1",
        result: `${cpuThreeOfOne.toFixed(2)}×`,
        goal: "≤ 1.1×",
        ok: cpuThreeOfOne <= 1.1,
        note: `the floor's 3 ÷ 1 processes: ${floorCpuThreeOfOne.toFixed(2)}×, with nothing shared but the database; the floor's growth per mutation on our 1 instance's CPU: ${machineBound.toFixed(2)}× (ours if our instances cost each other nothing; medians of per-round figures); ${growth("ours", one, three)}; ${growth("the floor's", floorOne, floorThree)}`,
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
        note: `floor 3 ÷ 1 ${formatRatio(floorThreeOfOne)}, ours 3 ÷ 1 ${formatRatio(threeOfOne)}; ${note(floorThree)}`,
      },
      {
        benchmark: "another instance's commit, nothing here reads its table: delivered (in-process)",
        result: `${formatNs(announced.skippedNs)}/commit`,
        note: `${formatNs(announced.parsedNs)} with its write set parsed (a payload without the table header, as before); \`bench:post\`'s write set; with 3 instances each hears 2 per own commit`,
      },
      ...countRows([
        ["PostgreSQL, 1 instance", one],
        ["PostgreSQL, 2 instances", two],
        ["PostgreSQL, 3 instances", three],
        ["floor, 1 process", floorOne],
        ["floor, 3 processes", floorThree],
      ]),
      ...moduleRows([
        ["PostgreSQL, 1 instance", one],
        ["PostgreSQL, 3 instances", three],
        ["floor, 1 process", floorOne],
        ["floor, 3 processes", floorThree],
        ["SQLite, 1 process", sqlite],
      ]),
      ...othersRows(one, [
        [2, two, followTwo],
        [3, three, followThree],
      ]),
    ];
  },
};

/**
 * Where CPU per mutation grows from one process to three: user time (the processes' own code) and
 * system time (the kernel's socket work and wake-ups on their behalf).
 */
function growth(whose: string, one: WriteLoad, three: WriteLoad): string {
  const system = (r: WriteLoad) => r.cpuPerMutationNs - r.userPerMutationNs;
  return `${whose} user time ${formatNs(one.userPerMutationNs)} → ${formatNs(three.userPerMutationNs)}, system ${formatNs(system(one))} → ${formatNs(system(three))} per mutation`;
}

/** The servers' event-loop turns and syscalls per mutation, when `perf` counted them. */
function loopNote(load: WriteLoad): string {
  if (load.epollWaitsPerMutation === undefined || load.syscallsPerMutation === undefined) return "";
  return `, ${load.epollWaitsPerMutation.toFixed(2)} event-loop turns (epoll waits), ${load.syscallsPerMutation.toFixed(1)} syscalls in all (perf)`;
}

/** Statements, context switches and syscalls per mutation, a row per configuration. */
function countRows(configs: [string, WriteLoad][]): BenchRow[] {
  return configs.flatMap(([what, load]) => {
    const counts = load.counts;
    if (!counts) return [];
    const statements = [...counts.statements.values()].reduce((n, [calls]) => n + calls, 0);
    return [
      {
        benchmark: `counts per mutation: ${what}`,
        result: `${statements.toFixed(2)} statements`,
        note: `${formatStatements(counts)}; servers (summed): ${formatProcesses(counts.loaded, formatNs)}${loopNote(load)}; PostgreSQL's processes: ${formatProcesses(counts.postgres, formatNs, false)}`,
      },
    ];
  });
}

/** With {@link PROFILE}: the loaded servers' CPU per mutation by module, a row per configuration. */
function moduleRows(configs: [string, WriteLoad][]): BenchRow[] {
  return configs.flatMap(([what, load]) => {
    const byModule = load.cpuByModule;
    if (!byModule) return [];
    const sorted = [...byModule].sort((a, b) => b[1] - a[1]);
    const total = sorted.reduce((sum, [, ns]) => sum + ns, 0);
    const shown = sorted.slice(0, 14);
    const rest = total - shown.reduce((sum, [, ns]) => sum + ns, 0);
    return [
      {
        benchmark: `CPU by module (perf, sampled on CPU): ${what}`,
        result: `${formatNs(total)}/mutation`,
        note: `${[...shown.map(([label, ns]) => `${label} ${formatNs(ns)}`), `the rest ${formatNs(rest)}`].join("; ")}`,
      },
    ];
  });
}

/**
 * Item 2 of issue 48: the CPU an instance spends on the others' commits, from runs where one
 * instance takes the whole load and the others only follow it (CPU of a follower per commit it
 * hears), beside the CPU per mutation with every instance loaded.
 */
function othersRows(one: WriteLoad, configs: [number, WriteLoad, WriteLoad][]): BenchRow[] {
  const rows: BenchRow[] = [
    {
      benchmark: "CPU on the others' commits: 1 instance",
      result: "0 per mutation",
      note: `no others; CPU per mutation ${formatNs(one.cpuPerMutationNs)}`,
    },
  ];
  for (const [n, all, follow] of configs) {
    const others = n - 1;
    const idle = follow.counts?.idle;
    if (!idle) continue;
    // A follower's figures per commit it hears: the idle group's, per loaded mutation, per follower,
    // less what the followers spend with nothing to follow.
    const baselineNs = (follow.idleCpuNsPerSec ?? 0) / follow.mutationsPerSec;
    const perHeard = (idle.cpuNs - baselineNs) / others;
    rows.push({
      benchmark: `CPU on the others' commits: ${n} instances`,
      result: `${formatNs(others * perHeard)} per mutation`,
      note: `a follower (only following) spends ${formatNs(perHeard)} per commit it hears (${formatNs(idle.cpuNs / others)} before taking off its idle ${formatNs((follow.idleCpuNsPerSec ?? 0) / others)}/s; ${(idle.voluntary / others).toFixed(2)} voluntary + ${(idle.involuntary / others).toFixed(2)} involuntary context switches, ${(idle.syscalls / others).toFixed(1)} syscalls), each mutation heard by ${others}; the loaded instance then: ${formatNs(follow.cpuPerMutationNs)}/mutation, ${formatCount(follow.mutationsPerSec)}/s; all ${n} loaded: ${formatNs(all.cpuPerMutationNs)}/mutation summed (1 instance: ${formatNs(one.cpuPerMutationNs)}); statements with 1 loaded: ${formatStatements(follow.counts!)}`,
    });
  }
  return rows;
}
