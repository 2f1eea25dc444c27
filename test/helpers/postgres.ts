/**
 * A real, throwaway PostgreSQL server for tests: initdb into a temp dir, listen on 127.0.0.1 at a
 * free port, one fresh database per suite (or test), stopped when the tests end.
 *
 * The server binaries come from the Debian package (`/usr/lib/postgresql/<version>/bin`). When
 * they are missing the PostgreSQL tests are skipped with a loud message — except in CI
 * (`CI=true`), where a missing server is a failure, not a reason to skip.
 * PostgreSQL refuses to run as root, so under root the server runs as the `postgres` user.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { tempDir } from "./temp.ts";

process.env.LOG_LEVEL ??= "silent";

/** Directory holding `initdb` and `pg_ctl`, newest version first; null when not installed. */
function findBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length) return join(root, versions[0], "bin");
  }
  try {
    const initdb = execFileSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).trim();
    if (initdb) return initdb.replace(/\/initdb$/, "");
  } catch {
    // not on PATH either
  }
  return null;
}

/** Where the PostgreSQL server binaries are; null means the PostgreSQL tests are skipped. */
export const postgresBinDir = findBinDir();

if (!postgresBinDir) {
  const message =
    "PostgreSQL is not installed, so the PostgreSQL engine tests cannot run. " +
    "Install the server with `apt-get install -y postgresql` (the tests start their own server from " +
    "/usr/lib/postgresql/*/bin; no running service or configuration is needed).";
  if (process.env.CI === "true") throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n${"!".repeat(100)}\n!! SKIPPING PostgreSQL tests: ${message}\n${"!".repeat(100)}\n`);
}

export interface TestPostgres {
  port: number;
  /** The server's data directory (a standby is made from it, `postgres-standby.ts`). */
  dataDir: string;
  /** The directory holding the data directory, the log and the Unix socket. */
  dir: string;
  /** Creates an empty database and returns its `postgres://` URL. */
  createDatabase(): Promise<string>;
  /** Runs one SQL statement on `url` (or the maintenance database) and returns the rows. */
  sql<R extends pg.QueryResultRow = any>(text: string, values?: unknown[], url?: string): Promise<R[]>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Runs a server binary, as the `postgres` user when we are root. */
export function runBin(name: string, args: string[]): string {
  const bin = join(postgresBinDir as string, name);
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
  return execFileSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Hands `dir` to the `postgres` user when we are root (the server refuses to run as root). */
export function chownToPostgres(dir: string): void {
  if (process.getuid?.() !== 0) return;
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  chownSync(dir, uid, gid);
}

let databases = 0;

/** A running server: where it listens and how to stop it (at once, `-m immediate`). */
export interface ServerProcess {
  port: number;
  /** The server's log file. */
  log: string;
  stopSync(): void;
}

/**
 * Starts the server of data directory `data` (inside `dir`) on a free loopback port with
 * `settings` (`-c name=value` each) and waits until it accepts connections; stopped when the
 * process exits at the latest.
 */
export async function startServerAt(
  dir: string,
  data: string,
  settings: string[] = [],
): Promise<ServerProcess> {
  const log = join(dir, "server.log");
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    const options = [
      "-c listen_addresses=127.0.0.1",
      `-p ${port}`,
      `-c unix_socket_directories=${dir}`,
      // Durability is not under test here; speed is welcome.
      "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
      ...settings.map((setting) => `-c ${setting}`),
    ].join(" ");
    try {
      runBin("pg_ctl", ["-D", data, "-l", log, "-w", "-t", "60", "-o", options, "start"]);
      break;
    } catch (error) {
      // Most likely someone took the port between our probe and the server's bind: try another.
      if (attempt >= 3) {
        const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
        throw new Error(`PostgreSQL did not start: ${String(error)}\n${tail}`);
      }
    }
  }
  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    try {
      runBin("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } catch {
      // already gone
    }
  };
  process.once("exit", stopSync);
  return { port, log, stopSync };
}

/**
 * Server settings for a durable server as in production (fsync, synchronous_commit and
 * full_page_writes on): for tests and benchmarks whose figures depend on the cost of a commit
 * (`npm run bench -- pg-writes`). Pass them to {@link startPostgres}.
 */
export const DURABLE_SETTINGS: readonly string[] = [
  "fsync=on",
  "synchronous_commit=on",
  "full_page_writes=on",
];

/**
 * Starts a new PostgreSQL server in a temp dir. `settings` (`name=value`) come after the
 * defaults, so they may override them (e.g. `synchronous_commit=on`, which lets a streaming
 * standby receive each commit at once instead of with the WAL writer's next flush).
 */
export async function startPostgres(settings: string[] = []): Promise<TestPostgres> {
  if (!postgresBinDir) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql)");
  const dir = tempDir("service-auth-pg-");
  chownToPostgres(dir);
  const data = join(dir, "data");
  runBin("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  const { port, stopSync } = await startServerAt(dir, data, settings);
  const urlOf = (db: string) => `postgres://postgres@127.0.0.1:${port}/${db}`;
  const sql = async (text: string, values: unknown[] = [], url = urlOf("postgres")) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  return {
    port,
    dataDir: data,
    dir,
    sql,
    async createDatabase() {
      const name = `test_${process.pid}_${++databases}`;
      await sql(`CREATE DATABASE "${name}"`);
      return urlOf(name);
    },
    async stop() {
      stopSync();
    },
  };
}

/**
 * Starts a server (with `settings`, see {@link startPostgres}) before the tests of the enclosing
 * `describe` (or file) and stops it after them. Call it inside `describe.skipIf(!postgresBinDir)(…)`.
 */
export function usePostgres(settings: string[] = []): () => TestPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startPostgres(settings);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error("the PostgreSQL server is not started yet");
    return server;
  };
}
