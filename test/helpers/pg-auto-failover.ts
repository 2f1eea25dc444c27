/**
 * A real pg_auto_failover formation for tests: a monitor and two PostgreSQL nodes (a primary and a
 * synchronous standby) on loopback ports in a temp dir, from Debian's packages
 * (`postgresql-15-auto-failover`, `pg-auto-failover-cli`). Each node runs as `pg_autoctl run` in
 * a process group of its own, so a test can SIGKILL a node whole (keeper and postgres: killing
 * postgres alone only makes its keeper restart it) and start it again to rejoin.
 *
 * Without the binaries the failover tests are skipped loudly; under CI=true that is a failure.
 * PostgreSQL refuses to run as root, so under root everything runs as the `postgres` user.
 *
 * The monitor's health checks are tightened so a failover takes seconds, not the production
 * defaults' ~30 s (`pgautofailover.*` below); everything else is pg_auto_failover's default.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./example-app.ts";
import { postgresBinDir } from "./postgres.ts";
import { tempDir } from "./temp.ts";
import { eventually } from "./wait.ts";

const execFileAsync = promisify(execFile);
/**
 * Every call to the formation ends in bounded time (a hung attempt would stall `eventually`, which
 * only retries attempts that return): `pg_autoctl show state`, and each SQL client's connect and query.
 */
const CALL_TIMEOUT_MS = 30_000;
const BOUNDED_CLIENT = { connectionTimeoutMillis: 10_000, query_timeout: CALL_TIMEOUT_MS };

function findPgAutoctl(): string | null {
  for (const path of ["/usr/bin/pg_autoctl", "/usr/lib/postgresql/15/bin/pg_autoctl"]) {
    if (existsSync(path)) return path;
  }
  return null;
}

const pgAutoctl = findPgAutoctl();
/** pg_ctl of the PostgreSQL version pg_auto_failover's extension was built for (15 on bookworm). */
const pgCtl = ["15", "16", "17"]
  .map((v) => `/usr/lib/postgresql/${v}/bin/pg_ctl`)
  .find((p) => {
    const version = p.split("/")[4];
    return existsSync(p) && existsSync(`/usr/share/postgresql/${version}/extension/pgautofailover.control`);
  });

/** Whether the failover tests can run here. */
export const autoFailoverAvailable = Boolean(postgresBinDir && pgAutoctl && pgCtl);

if (!autoFailoverAvailable) {
  const message =
    "pg_auto_failover is not installed, so the PostgreSQL failover tests cannot run. Install it with " +
    "`apt-get install -y postgresql-15-auto-failover pg-auto-failover-cli` (the tests start their own " +
    "monitor and nodes; no running service or configuration is needed).";
  if (process.env.CI === "true") throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n${"!".repeat(100)}\n!! SKIPPING failover tests: ${message}\n${"!".repeat(100)}\n`);
}

/** Monitor settings that make a failover take seconds (production defaults in brackets). */
const FAST_MONITOR = {
  "pgautofailover.health_check_period": 1000, // [5000] ms between health checks
  "pgautofailover.health_check_timeout": 2000, // [5000]
  "pgautofailover.health_check_max_retries": 1, // [2]
  "pgautofailover.health_check_retry_delay": 1000, // [2000]
  "pgautofailover.node_considered_unhealthy_timeout": 5000, // [20000] no keeper report for this long
  "pgautofailover.primary_demote_timeout": 5000, // [30000] how long a lost primary gets to demote itself
  "pgautofailover.startup_grace_period": 2000, // [10000]
};

/** A node as `pg_autoctl show state --json` reports it. */
export interface NodeState {
  nodename: string;
  nodeport: number;
  health: number;
  current_group_state: string;
  assigned_group_state: string;
  reported_tli: number;
}

export interface FormationNode {
  name: string;
  port: number;
  pgdata: string;
}

export interface Formation {
  nodes: FormationNode[];
  /** Database `app` on every node, the primary found by the client: `target_session_attrs=read-write`. */
  url: string;
  /** `pg_autoctl show state --json`. */
  state(): Promise<NodeState[]>;
  /** Resolves with the state once `condition` holds for it (polled; bounded by `timeoutMs`). */
  waitForState(
    condition: (nodes: NodeState[]) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<NodeState[]>;
  /** The node the monitor has as primary, once there is exactly one healthy primary and a secondary. */
  stable(timeoutMs?: number): Promise<{ primary: FormationNode; standby: FormationNode }>;
  /** SIGKILLs the node's `pg_autoctl run` with its postgres (the whole process group); resolves once gone. */
  kill(node: FormationNode): Promise<void>;
  /** Starts the node's `pg_autoctl run` again (after {@link kill}): it rejoins as a standby. */
  start(node: FormationNode): void;
  /** Sends `signal` (SIGSTOP, SIGCONT) to the whole process group of a node or of `"monitor"`. */
  signal(name: string, signal: NodeJS.Signals): void;
  /**
   * Sends `signal` to a node's `pg_autoctl` process group only. SIGSTOP freezes the keeper (it
   * neither reports to the monitor nor acts on what it is assigned) and the postmaster (new
   * connections hang), while the sessions already open run on: PostgreSQL's other processes each
   * run in a session of their own (setsid).
   */
  signalKeeper(name: string, signal: NodeJS.Signals): void;
  /** `pg_autoctl perform switchover` (waits until the formation is stable again). */
  switchover(): Promise<void>;
  /** One statement on `node`'s database `app`. */
  sql<R extends pg.QueryResultRow = any>(node: FormationNode, text: string, values?: unknown[]): Promise<R[]>;
  /** The last output of a node's (or the monitor's) `pg_autoctl`, for a failing test's message. */
  log(name: string): string;
  /** The monitor's last state changes (`pg_autoctl show events`), for a failing test's message. */
  events(count?: number): Promise<string>;
  /** Stops everything (SIGKILL: the data is thrown away). */
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

/**
 * The postmaster of `pgdata` and its children. Each child runs in a session of its own (PostgreSQL
 * calls setsid), so signalling the keeper's process group alone would miss them.
 */
function serverPids(pgdata: string): number[] {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(pgdata, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return [];
  }
  const pids = [postmaster];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may hold spaces and parentheses: fields start after the last ")".
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster)
        pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
}

function postgresIds(): { uid: number; gid: number } | undefined {
  if (!asRoot) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** Starts a monitor and two nodes; resolves once node 1 is primary and node 2 its synchronous standby. */
export async function startFormation(): Promise<Formation> {
  if (!autoFailoverAvailable || !pgAutoctl || !pgCtl) throw new Error("pg_auto_failover is not installed");
  const dir = tempDir("service-auth-pgaf-");
  const ids = postgresIds();
  const own = (path: string) => {
    if (ids) chownSync(path, ids.uid, ids.gid);
  };
  own(dir);
  const env = {
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_DATA_HOME: join(dir, "data"),
    XDG_RUNTIME_DIR: join(dir, "run"),
    PG_CONFIG: join(pgCtl, "../pg_config"),
    PATH: process.env.PATH ?? "/usr/bin:/bin",
  };
  for (const sub of ["config", "data", "run"]) {
    mkdirSync(join(dir, sub));
    own(join(dir, sub));
  }
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  /** argv running pg_autoctl with `args`, as the postgres user under root. */
  const command = (args: string[]): [string, string[]] =>
    asRoot
      ? ["runuser", ["-u", "postgres", "--", "env", ...envArgs, pgAutoctl, ...args]]
      : ["env", [...envArgs, pgAutoctl, ...args]];
  /** Runs a `pg_autoctl` command; one still running after `timeoutMs` is killed and fails with its output. */
  const run = async (args: string[], timeoutMs = 0) => {
    const [cmd, argv] = command(args);
    try {
      return (await execFileAsync(cmd, argv, { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: timeoutMs }))
        .stdout;
    } catch (error) {
      const e = error as { stderr?: string; stdout?: string; message: string };
      const output = `${e.stdout?.slice(-2000) ?? ""}${e.stderr?.slice(-3000) ?? ""}`;
      throw new Error(`pg_autoctl ${args.join(" ")} failed: ${e.message}\n${output}`);
    }
  };
  const running = new Map<string, ChildProcess>();
  const logs = new Map<string, string>();
  const spawnRun = (name: string, args: string[]) => {
    const [cmd, argv] = command(args);
    // A process group of its own: killing the group kills the keeper, postgres and its backends.
    const child = spawn(cmd, argv, { cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    logs.set(name, "");
    const keep = (d: Buffer) => logs.set(name, `${logs.get(name) ?? ""}${d}`.slice(-20_000));
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    running.set(name, child);
    return child;
  };
  const pgdataOf = (name: string) => join(dir, name);
  /** Signals a node's (or the monitor's) keeper group and every process of its postgres. */
  const signalNode = (name: string, signal: NodeJS.Signals) => {
    const child = running.get(name);
    const pids = serverPids(pgdataOf(name));
    signalAll(child?.pid ? [-child.pid] : [], signal);
    signalAll(pids, signal);
  };
  const killAll = () => {
    for (const name of running.keys()) signalNode(name, "SIGKILL");
  };
  process.once("exit", killAll);

  const [monitorPort, port1, port2] = [await freePort(), await freePort(), await freePort()];
  const monitorData = join(dir, "monitor");
  /**
   * pg_autoctl's own initdb syncs every file to disk, seconds on a busy machine; an existing data
   * directory is taken as it is. (Durability of commits is not affected: the server fsyncs them.)
   */
  const initdb = (pgdata: string) => {
    const bin = join(pgCtl, "../initdb");
    const args = ["-D", pgdata, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"];
    const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
    return execFileAsync(cmd, argv, { cwd: dir });
  };
  const common = [
    "--auth",
    "trust",
    "--no-ssl",
    "--ssl-mode",
    "disable",
    "--pgctl",
    pgCtl,
    "--hostname",
    "127.0.0.1",
  ];
  const t0 = Date.now();
  const stage = (what: string) => process.env.PGAF_DEBUG && console.log(`pgaf ${what} ${Date.now() - t0} ms`);
  await Promise.all([initdb(monitorData), initdb(join(dir, "node1"))]);
  stage("initdb");
  await run(["create", "monitor", "--pgdata", monitorData, "--pgport", String(monitorPort), ...common]);
  await run(["config", "set", "--pgdata", monitorData, "postgresql.listen_addresses", "127.0.0.1"]);
  stage("monitor created");
  spawnRun("monitor", ["run", "--pgdata", monitorData]);
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
  const monitorSql = async (text: string) => {
    const client = new pg.Client({
      connectionString: monitorUrl.replace("autoctl_node", "postgres"),
      ...BOUNDED_CLIENT,
    });
    client.on("error", () => {});
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end().catch(() => {});
    }
  };
  await eventually(() => monitorSql("SELECT 1"), 60_000);
  for (const [name, value] of Object.entries(FAST_MONITOR))
    await monitorSql(`ALTER SYSTEM SET ${name} = ${value}`);
  await monitorSql("SELECT pg_reload_conf()");
  stage("monitor up");

  const nodes: FormationNode[] = [
    { name: "node1", port: port1, pgdata: join(dir, "node1") },
    { name: "node2", port: port2, pgdata: join(dir, "node2") },
  ];
  const createArgs = (node: FormationNode) => [
    "create",
    "postgres",
    "--pgdata",
    node.pgdata,
    "--pgport",
    String(node.port),
    "--listen",
    "127.0.0.1",
    "--name",
    node.name,
    "--dbname",
    "app",
    "--username",
    "postgres",
    "--monitor",
    monitorUrl,
    ...common,
    "--run",
  ];
  // Bounded like every call here: `eventually` cannot end an attempt that never returns.
  const state = async (): Promise<NodeState[]> =>
    JSON.parse(
      await run(["show", "state", "--pgdata", monitorData, "--json"], CALL_TIMEOUT_MS),
    ) as NodeState[];
  const waitForState = (condition: (n: NodeState[]) => boolean, what: string, timeoutMs = 90_000) =>
    eventually(async () => {
      const nodes = await state();
      if (!condition(nodes)) throw new Error(`formation not ${what}: ${JSON.stringify(nodes)}`);
      return nodes;
    }, timeoutMs);
  const is = (n: NodeState | undefined, s: string) =>
    n?.current_group_state === s && n.assigned_group_state === s;
  const nodeSql = async <R extends pg.QueryResultRow = any>(
    node: FormationNode,
    text: string,
    values: unknown[] = [],
  ): Promise<R[]> => {
    const client = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${node.port}/app`,
      ...BOUNDED_CLIENT,
    });
    client.on("error", () => {});
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  };
  /**
   * One primary and one secondary as the monitor sees them, and the primary replicating to it
   * synchronously: `synchronous_standby_names` set and the standby in the sync (quorum) set. The
   * monitor's states alone do not say so; a test of what a switch keeps starts from there.
   */
  const stable = async (timeoutMs = 90_000) => {
    const until = Date.now() + timeoutMs;
    const formationStable = () =>
      waitForState(
        (ns) =>
          ns.length === 2 &&
          ns.some((n) => is(n, "primary") && n.health === 1) &&
          ns.some((n) => is(n, "secondary")),
        "stable (one primary, one secondary)",
        Math.max(1, until - Date.now()),
      );
    return eventually(
      async () => {
        const nodesNow = await formationStable();
        const primaryName = nodesNow.find((n) => is(n, "primary"))?.nodename;
        const primary = nodes.find((n) => n.name === primaryName) as FormationNode;
        const [sync] = await nodeSql<{ names: string; attached: string }>(
          primary,
          "SELECT current_setting('synchronous_standby_names') AS names, (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) AS attached",
        );
        if (!sync.names || Number(sync.attached) < 1) {
          throw new Error(
            `${primary.name} is primary but not replicating synchronously (synchronous_standby_names '${sync.names}', ${sync.attached} synchronous standbys): ${JSON.stringify(nodesNow)}`,
          );
        }
        return { primary, standby: nodes.find((n) => n !== primary) as FormationNode };
      },
      Math.max(1, until - Date.now()),
    );
  };

  spawnRun(nodes[0].name, createArgs(nodes[0]));
  await waitForState(
    (ns) =>
      is(
        ns.find((n) => n.nodename === "node1"),
        "single",
      ),
    "node1 single",
    120_000,
  );
  stage("node1 single");
  // The standby's pg_basebackup starts with a spread checkpoint: paced over minutes when much is
  // dirty (the new database); an immediate one now leaves it nothing to write.
  await (async () => {
    const client = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${port1}/postgres`,
      ...BOUNDED_CLIENT,
    });
    client.on("error", () => {});
    await client.connect();
    try {
      await client.query("CHECKPOINT");
    } finally {
      await client.end().catch(() => {});
    }
  })();
  stage("checkpoint");
  spawnRun(nodes[1].name, createArgs(nodes[1]));
  await stable(120_000);
  stage("stable");

  const url = `postgres://postgres@127.0.0.1:${port1},127.0.0.1:${port2}/app?target_session_attrs=read-write&sslmode=disable`;
  return {
    nodes,
    url,
    state,
    waitForState,
    stable,
    async kill(node) {
      const child = running.get(node.name);
      if (!child) return;
      const gone = new Promise<void>((r) =>
        child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r()),
      );
      signalNode(node.name, "SIGKILL");
      await gone;
      running.delete(node.name);
    },
    signal: signalNode,
    signalKeeper(name, signal) {
      const child = running.get(name);
      if (child?.pid) signalAll([-child.pid], signal);
    },
    start(node) {
      spawnRun(node.name, ["run", "--pgdata", node.pgdata]);
    },
    async switchover() {
      // Bounded, so that a switchover that never completes fails with pg_autoctl's output (a CI
      // run once spent the test's whole 400 s somewhere in the switchover test, with no output).
      await run(["perform", "switchover", "--pgdata", monitorData, "--formation", "default"], 150_000);
    },
    sql: nodeSql,
    log: (name) => logs.get(name) ?? "",
    events: (count = 60) =>
      run(["show", "events", "--pgdata", monitorData, "--count", String(count)], CALL_TIMEOUT_MS).catch(
        (error: Error) => error.message,
      ),
    async stop() {
      killAll();
      running.clear();
    },
  };
}
