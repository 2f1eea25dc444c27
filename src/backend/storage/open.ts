/** Chooses the storage engine from `DATABASE_URL`. */
import { resolve } from "node:path";
import type { StorageEngine } from "./engine.ts";
import { PostgresEngine } from "./postgres.ts";
import { SqliteEngine } from "./sqlite.ts";

/** Default embedded database file, relative to the working directory. */
export const DEFAULT_DATABASE_FILE = "./.data/service.sqlite";

/**
 * `undefined` or a path → SQLite file; `sqlite:PATH` / `file:PATH` → SQLite file;
 * `postgres://…` / `postgresql://…` → PostgreSQL (connections open lazily, at `migrate`).
 */
export function openEngine(databaseUrl: string | undefined): StorageEngine {
  const url = databaseUrl?.trim() || DEFAULT_DATABASE_FILE;
  if (/^postgres(ql)?:\/\//i.test(url)) {
    return new PostgresEngine({ connectionString: url });
  }
  const file = url.replace(/^(sqlite|file):(\/\/)?/i, "");
  // FULL also survives power loss, at the price of an fsync per commit (docs/decisions.md).
  const synchronous = process.env.SQLITE_SYNCHRONOUS?.toUpperCase() === "FULL" ? "FULL" : "NORMAL";
  return new SqliteEngine({ filename: file === ":memory:" ? file : resolve(file), synchronous });
}
