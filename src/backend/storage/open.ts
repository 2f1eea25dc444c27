/** Chooses the storage engine from `DATABASE_URL`. */
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
 * `undefined` or a path → SQLite file; `sqlite:PATH` / `file:PATH` → SQLite file;
 * `postgres://…` / `postgresql://…` → PostgreSQL.
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
  if (target.kind === "postgres") return new PostgresEngine({ connectionString: target.connectionString });
  // FULL also survives power loss, at the price of an fsync per commit (docs/decisions.md).
  const synchronous = process.env.SQLITE_SYNCHRONOUS?.toUpperCase() === "FULL" ? "FULL" : "NORMAL";
  return new SqliteEngine({ filename: target.filename, synchronous });
}
