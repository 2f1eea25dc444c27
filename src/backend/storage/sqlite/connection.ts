/**
 * One better-sqlite3 connection as the engine uses it: opened with the engine's pragmas (no
 * `busy_timeout`, WAL on the writer), with its prepared statements cached by SQL text and its scan
 * statements by request shape, so a repeated statement is neither parsed nor built again. The
 * writer, each pooled reader and cluster mode's follower each hold one. Also says, for an
 * operator, why a file could not be opened.
 */
import { accessSync, constants, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "@service-auth/better-sqlite3";
import { sqliteDialect } from "../sql/dialect.ts";
import { SqlStatements } from "../sql/statements.ts";

export type DB = Database.Database;
/** A prepared statement (an interface of our own, so the declaration build can name it). */
export interface Stmt extends Database.Statement {}

/** Prepared statements for one connection, keyed by SQL text. */
class StatementCache {
  private readonly cache = new Map<string, Stmt>();
  constructor(private readonly db: DB) {}
  get(sql: string): Stmt {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}

export class SqliteConnection {
  readonly db: DB;
  readonly stmts: StatementCache;
  /** Scan statements by table, index and `scanVariant`: a repeated scan neither builds nor hashes its SQL. */
  readonly scans = new Map<string, Map<string, Map<number, Stmt>>>();
  /** Statements run once per read transaction. */
  readonly begin: Stmt;
  readonly commit: Stmt;
  /** Statement texts; reads need no layout, the writer's gets the migrated one. */
  sql = new SqlStatements(sqliteDialect, { tables: {} });
  constructor(filename: string, synchronous: string, readonly: boolean) {
    this.db = new Database(filename, { fileMustExist: readonly });
    // No busy_timeout: SQLite would wait for another process's lock inside a synchronous call,
    // freezing the event loop. Writers wait asynchronously instead (`SqliteWriteLock`); WAL
    // readers never wait for a writer.
    this.db.pragma("busy_timeout = 0");
    if (!readonly) this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${synchronous}`);
    this.db.defaultSafeIntegers(false);
    this.stmts = new StatementCache(this.db);
    this.begin = this.stmts.get("BEGIN");
    this.commit = this.stmts.get("COMMIT");
  }
}

/** The reason, for an operator, why `filename` could not be opened as a database. */
export function whyUnopenable(filename: string, error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const dir = dirname(filename);
  try {
    if (statSync(filename).isDirectory()) return "it is a directory";
  } catch {
    // does not exist (yet): the directory must let us create it
  }
  if (code === "ENOTDIR" || code === "EEXIST") return `${dir} is not a directory`;
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return `the directory ${dir} is not writable (SQLite creates the file and its -wal and -shm files there)`;
  }
  try {
    accessSync(filename, constants.R_OK | constants.W_OK);
  } catch (e) {
    if ((e as { code?: unknown }).code === "EACCES") return "no permission to read and write it";
  }
  return `${message}${typeof code === "string" ? ` (${code})` : ""}`;
}
