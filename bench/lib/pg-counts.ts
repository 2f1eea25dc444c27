/**
 * Counts per committed mutation (`pg-writes`, issue 48): what a loaded machine changes little,
 * unlike CPU and wall time. Each {@link countsSnapshot} reads
 * - every statement PostgreSQL ran in the bench database, by kind (`pg_stat_statements`, which
 *   the server must preload: {@link STATEMENT_STATS_SETTINGS}); the bench's own statistics
 *   queries are left out;
 * - of each server process (Node) and of the PostgreSQL server's processes: CPU time, context
 *   switches (voluntary: the thread slept, e.g. its event loop waited in `epoll_wait`; involuntary:
 *   preempted) and read/write syscalls (`/proc/<pid>/io`: every socket read and write, so each
 *   round trip to PostgreSQL costs the instance at least one of each).
 * {@link perMutation} turns two snapshots into figures per mutation.
 */
import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";
import { startPerf } from "./perf-run.ts";
import { childPids } from "./proc.ts";

/** Server settings that make `pg_stat_statements` count every statement (top level and nested). */
export const STATEMENT_STATS_SETTINGS: readonly string[] = [
  "shared_preload_libraries=pg_stat_statements",
  "pg_stat_statements.track=all",
  "pg_stat_statements.max=2000",
];

/** Statement kinds, matched on the normalized text in this order; unmatched ones keep their text. */
const KINDS: [label: string, match: RegExp][] = [
  ["BEGIN (write)", /^BEGIN ISOLATION LEVEL SERIALIZABLE/i],
  ["SET LOCAL (write)", /^SET LOCAL service_auth\.engine/i],
  ["BEGIN (read)", /^BEGIN ISOLATION LEVEL REPEATABLE READ/i],
  ["log head with a read", /^SELECT seq FROM "_commit_log" ORDER BY seq DESC/i],
  ["COMMIT", /^COMMIT/i],
  ["ROLLBACK", /^ROLLBACK/i],
  ["log append", /^INSERT INTO "_commit_log"/i],
  ["document insert", /^INSERT INTO/i],
  ["NOTIFY statement", /pg_notify/i],
  ["follower: log read", /^SELECT seq, origin, writes FROM "_commit_log"/i],
  ["follower: drawers", /^SELECT CASE WHEN s\.is_called/i],
  ["follower: log head", /^SELECT coalesce\(max\(seq\)/i],
  ["follower: oldest", /^SELECT min\(seq\)/i],
  ["follower: prune", /^DELETE FROM "_commit_log"/i],
  ["heartbeat / ping", /^SELECT \$1$/i],
];
/** The bench's own statistics queries (this module's, the lock sampler's). */
const OWN = /pg_stat_statements|pg_stat_database|pg_stat_clear_snapshot|pg_locks WHERE NOT granted/i;

function kindOf(query: string): string {
  const text = query.replace(/\s+/g, " ").trim();
  return KINDS.find(([, re]) => re.test(text))?.[0] ?? text.slice(0, 60);
}

/** Creates the extension in the database `client` is connected to (the server must preload it). */
export async function installStatementStats(client: pg.Client): Promise<void> {
  await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
}

/** Counters of one set of processes. */
interface ProcessCounters {
  cpuNs: number;
  /** Context switches of every thread. */
  voluntary: number;
  involuntary: number;
  /** Context switches of the main thread alone (voluntary: an event loop's sleeps). */
  mainVoluntary: number;
  mainInvoluntary: number;
  /** Read and write syscalls (NaN when `/proc/<pid>/io` is not readable). */
  syscr: number;
  syscw: number;
}

function readNumber(text: string, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

function processCounters(pid: number): ProcessCounters {
  let voluntary = 0;
  let involuntary = 0;
  let mainVoluntary = 0;
  let mainInvoluntary = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
      const v = readNumber(status, "voluntary_ctxt_switches");
      const n = readNumber(status, "nonvoluntary_ctxt_switches");
      voluntary += v;
      involuntary += n;
      if (Number(tid) === pid) {
        mainVoluntary = v;
        mainInvoluntary = n;
      }
    } catch {
      // the thread ended meanwhile
    }
  }
  let syscr = Number.NaN;
  let syscw = Number.NaN;
  try {
    const io = readFileSync(`/proc/${pid}/io`, "utf8");
    syscr = readNumber(io, "syscr");
    syscw = readNumber(io, "syscw");
  } catch {
    // not readable (another user's process without the capability)
  }
  return { cpuNs: processOnCpuNs(pid), voluntary, involuntary, mainVoluntary, mainInvoluntary, syscr, syscw };
}

/**
 * Time on a CPU of every thread of `pid`, ns (`/proc/<pid>/task/<tid>/schedstat`, first field):
 * the scheduler's own clock, finer than `/proc/<pid>/stat`'s 10 ms ticks, which round an idle
 * follower's few milliseconds a second to nothing.
 */
export function processOnCpuNs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns;
}

function sumCounters(pids: number[]): ProcessCounters {
  const sum: ProcessCounters = {
    cpuNs: 0,
    voluntary: 0,
    involuntary: 0,
    mainVoluntary: 0,
    mainInvoluntary: 0,
    syscr: 0,
    syscw: 0,
  };
  for (const pid of pids) {
    let c: ProcessCounters;
    try {
      c = processCounters(pid);
    } catch {
      continue; // exited meanwhile
    }
    for (const key of Object.keys(sum) as (keyof ProcessCounters)[]) sum[key] += c[key];
  }
  return sum;
}

/** What {@link countsSnapshot} read. */
export interface CountsSnapshot {
  /** Statement kind → [calls, rows]. */
  statements: Map<string, [number, number]>;
  /** Per process group: the instances under load, the idle ones, PostgreSQL's. */
  processes: Record<"loaded" | "idle" | "postgres", ProcessCounters>;
  /** PostgreSQL backends counted (its processes change while clients connect). */
  postgresPids: Set<number>;
}

/** Reads the counters; `postmasterPid` undefined leaves PostgreSQL's processes out. */
export async function countsSnapshot(
  client: pg.Client,
  pids: { loaded: number[]; idle: number[]; postmasterPid?: number },
): Promise<CountsSnapshot> {
  const { rows } = await client.query<{ query: string; calls: string; rows: string }>(
    `SELECT query, calls, rows FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const statements = new Map<string, [number, number]>();
  for (const row of rows) {
    if (OWN.test(row.query)) continue;
    const kind = kindOf(row.query);
    const [calls, n] = statements.get(kind) ?? [0, 0];
    statements.set(kind, [calls + Number(row.calls), n + Number(row.rows)]);
  }
  const postgresPids =
    pids.postmasterPid === undefined ? [] : [pids.postmasterPid, ...childPids(pids.postmasterPid)];
  return {
    statements,
    processes: {
      loaded: sumCounters(pids.loaded),
      idle: sumCounters(pids.idle),
      postgres: sumCounters(postgresPids),
    },
    postgresPids: new Set(postgresPids),
  };
}

/** Process counters per mutation. */
export interface ProcessRates {
  cpuNs: number;
  voluntary: number;
  involuntary: number;
  mainVoluntary: number;
  mainInvoluntary: number;
  syscalls: number;
}

/** Figures per committed mutation between two snapshots. */
export interface Counts {
  /** Statement kind → [calls, rows] per mutation. */
  statements: Map<string, [number, number]>;
  loaded: ProcessRates;
  idle: ProcessRates;
  postgres: ProcessRates;
}

function rates(a: ProcessCounters, b: ProcessCounters, mutations: number): ProcessRates {
  return {
    cpuNs: (b.cpuNs - a.cpuNs) / mutations,
    voluntary: (b.voluntary - a.voluntary) / mutations,
    involuntary: (b.involuntary - a.involuntary) / mutations,
    mainVoluntary: (b.mainVoluntary - a.mainVoluntary) / mutations,
    mainInvoluntary: (b.mainInvoluntary - a.mainInvoluntary) / mutations,
    syscalls: (b.syscr - a.syscr + b.syscw - a.syscw) / mutations,
  };
}

/** `before` → `after`, divided by `mutations`. */
export function perMutation(before: CountsSnapshot, after: CountsSnapshot, mutations: number): Counts {
  const statements = new Map<string, [number, number]>();
  for (const [kind, [calls, rows]] of after.statements) {
    const [c0, r0] = before.statements.get(kind) ?? [0, 0];
    if (calls > c0) statements.set(kind, [(calls - c0) / mutations, (rows - r0) / mutations]);
  }
  return {
    statements,
    loaded: rates(before.processes.loaded, after.processes.loaded, mutations),
    idle: rates(before.processes.idle, after.processes.idle, mutations),
    postgres: rates(before.processes.postgres, after.processes.postgres, mutations),
  };
}

/** The median, figure by figure, of several rounds' counts. */
export function medianCounts(rounds: Counts[], median: (values: number[]) => number): Counts {
  const kinds = new Set(rounds.flatMap((r) => [...r.statements.keys()]));
  const statements = new Map<string, [number, number]>();
  for (const kind of kinds) {
    const of = (i: 0 | 1) => median(rounds.map((r) => r.statements.get(kind)?.[i] ?? 0));
    statements.set(kind, [of(0), of(1)]);
  }
  const group = (key: "loaded" | "idle" | "postgres"): ProcessRates => {
    const of = (k: keyof ProcessRates) => median(rounds.map((r) => r[key][k]));
    return {
      cpuNs: of("cpuNs"),
      voluntary: of("voluntary"),
      involuntary: of("involuntary"),
      mainVoluntary: of("mainVoluntary"),
      mainInvoluntary: of("mainInvoluntary"),
      syscalls: of("syscalls"),
    };
  };
  return { statements, loaded: group("loaded"), idle: group("idle"), postgres: group("postgres") };
}

/** Statements per mutation in one line, the most frequent first (NOTIFY with its messages). */
export function formatStatements(counts: Counts): string {
  const total = [...counts.statements.values()].reduce((n, [calls]) => n + calls, 0);
  const parts = [...counts.statements.entries()]
    .filter(([, [calls]]) => calls >= 0.0005)
    .sort((a, b) => b[1][0] - a[1][0])
    .map(([kind, [calls, rows]]) => {
      if (kind === "NOTIFY statement") return `${kind} ${calls.toFixed(3)} (messages ${rows.toFixed(2)})`;
      if (kind === "follower: log read") return `${kind} ${calls.toFixed(3)} (rows ${rows.toFixed(2)})`;
      return `${kind} ${calls.toFixed(3)}`;
    });
  return `${total.toFixed(2)} statements/mutation: ${parts.join(", ")}`;
}

/**
 * One process group's rates in one line; `threads`: the group's processes have threads besides
 * the main one (Node), so the main thread's share is shown.
 */
export function formatProcesses(
  rates: ProcessRates,
  formatNs: (ns: number) => string,
  threads = true,
): string {
  const syscalls = Number.isNaN(rates.syscalls) ? "" : `, ${rates.syscalls.toFixed(1)} read/write syscalls`;
  const main = (n: number) => (threads ? ` (main thread ${n.toFixed(2)})` : "");
  return `CPU ${formatNs(rates.cpuNs)}, context switches ${rates.voluntary.toFixed(2)} voluntary${main(rates.mainVoluntary)} + ${rates.involuntary.toFixed(2)} involuntary${main(rates.mainInvoluntary)}${syscalls}`;
}

/** Event-loop turns and syscalls of processes, counted by `perf stat` while a load runs. */
export interface LoopCounts {
  /** `epoll_wait`/`epoll_pwait` calls: libuv's loop makes one per turn. */
  epollWaits: number;
  syscalls: number;
}

/**
 * Starts `perf stat` on `pids` (all their threads); `stop` ends it and resolves to its counts, or
 * undefined where `perf` or its syscall tracepoints are unavailable (it is optional).
 */
export function countLoopTurns(pids: number[]): { stop(): Promise<LoopCounts | undefined> } {
  const events = [
    "syscalls:sys_enter_epoll_wait",
    "syscalls:sys_enter_epoll_pwait",
    "syscalls:sys_enter_epoll_pwait2",
    "raw_syscalls:sys_enter",
  ];
  const perf = startPerf(["stat", "-x", ",", "-e", events.join(","), "-p", pids.join(",")]);
  return {
    async stop() {
      const { stderr: output } = await perf.stop();
      const count = (event: string) => {
        const line = output.split("\n").find((l) => l.split(",")[2] === event);
        const value = line ? Number(line.split(",")[0]) : Number.NaN;
        return Number.isFinite(value) ? value : Number.NaN;
      };
      const epoll = events.slice(0, 3).map(count);
      const syscalls = count("raw_syscalls:sys_enter");
      if (epoll.every(Number.isNaN) || Number.isNaN(syscalls)) return undefined;
      return { epollWaits: epoll.filter((n) => !Number.isNaN(n)).reduce((a, b) => a + b, 0), syscalls };
    },
  };
}
