/** Chooses the storage engine from `DATABASE_URL`, with the timeouts from `DATABASE_*_MS`. */
import { resolve } from "node:path";
import type { StorageEngine } from "./engine.ts";
import { PostgresEngine } from "./postgres.ts";
import { SqliteEngine } from "./sqlite.ts";

/** Default embedded database file, relative to the working directory. */
export const DEFAULT_DATABASE_FILE = "./.data/service.sqlite";

/** Where `DATABASE_URL` points: a SQLite file (absolute path, or ":memory:") or a PostgreSQL URL. */
export type DatabaseTarget =
  | { kind: "sqlite"; filename: string }
  | { kind: "postgres"; connectionString: string };

/**
 * A duration setting from the environment, in ms; undefined when unset (the engine's default).
 * A value that is not a positive integer refuses to start rather than silently meaning "none".
 */
export function durationSetting(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new Error(`${name} must be a positive whole number of milliseconds, got "${raw}"`);
  }
  return ms;
}

/**
 * `undefined` or a path → SQLite file; `sqlite:PATH` / `file:PATH` → SQLite file;
 * `postgres://…` / `postgresql://…` → PostgreSQL (connections open lazily, at `migrate`).
 *
 * Settings: `DATABASE_CONNECT_TIMEOUT_MS`, `DATABASE_STATEMENT_TIMEOUT_MS`,
 * `DATABASE_QUERY_TIMEOUT_MS` (PostgreSQL), `DATABASE_BUSY_TIMEOUT_MS` (SQLite), `SQLITE_SYNCHRONOUS`.
 */
export function databaseTarget(databaseUrl: string | undefined): DatabaseTarget {
  const url = databaseUrl?.trim() || DEFAULT_DATABASE_FILE;
  if (/^postgres(ql)?:\/\//i.test(url)) return { kind: "postgres", connectionString: url };
  const file = url.replace(/^(sqlite|file):(\/\/)?/i, "");
  return { kind: "sqlite", filename: file === ":memory:" ? file : resolve(file) };
}

/** The engine for `databaseUrl` (see {@link databaseTarget}); PostgreSQL connects lazily, at `migrate`. */
export function openEngine(databaseUrl: string | undefined): StorageEngine {
  const target = databaseTarget(databaseUrl);
  if (target.kind === "postgres") {
    return new PostgresEngine({
      connectionString: target.connectionString,
      connectTimeoutMs: durationSetting("DATABASE_CONNECT_TIMEOUT_MS"),
      statementTimeoutMs: durationSetting("DATABASE_STATEMENT_TIMEOUT_MS"),
      queryTimeoutMs: durationSetting("DATABASE_QUERY_TIMEOUT_MS"),
    });
  }
  // FULL also survives power loss, at the price of an fsync per commit (docs/decisions.md).
  const synchronous = process.env.SQLITE_SYNCHRONOUS?.toUpperCase() === "FULL" ? "FULL" : "NORMAL";
  return new SqliteEngine({
    filename: target.filename,
    synchronous,
    busyTimeoutMs: durationSetting("DATABASE_BUSY_TIMEOUT_MS"),
  });
}
