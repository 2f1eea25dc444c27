/**
 * The one place that classifies database driver errors (PostgreSQL and SQLite) into what callers
 * and clients see: a lost or unreachable database becomes `503 DATABASE_UNAVAILABLE`, a foreign
 * write lock `503 DATABASE_BUSY`, a serialization conflict is retryable; everything else stays
 * what it is (an internal error). Engines call these; nothing else inspects driver errors.
 */
import { AppError } from "../errors.ts";
import { StartRefusal } from "../start-refusal.ts";

/** SQLSTATEs after which the whole transaction may simply run again. */
const CONFLICT_STATES = new Set(["40001", "40P01"]);

/**
 * SQLSTATE classes and codes meaning the server is gone, going or refusing connections:
 * 08 connection exception, 53 insufficient resources (too many connections), 57P01–57P05
 * administrator/crash shutdown, cannot connect now, idle session timeout, 57014 a statement
 * cancelled by `statement_timeout` (the database did not answer in time).
 */
const UNAVAILABLE_CLASSES = new Set(["08", "53"]);
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "57P04", "57P05", "57014", "58030"]);

/** Socket-level failures of the connection to the server. */
const UNAVAILABLE_SYSCALLS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Messages of node-postgres and pg-pool for a lost connection or an exceeded client-side timeout;
 * they carry no code.
 */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^Query read timeout$/,
  /not queryable/,
  /^timeout exceeded when trying to connect$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
];

/** SQLite result codes of a lock held by another connection. */
const BUSY_CODES = new Set(["SQLITE_BUSY", "SQLITE_BUSY_RECOVERY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED"]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A statement the database cancelled at `statement_timeout` (57014), or that the driver gave up
 * waiting for (`query_timeout`): counted by the metrics, then handled as unavailable.
 */
export function isStatementTimeout(error: unknown): boolean {
  if (codeOf(error) === "57014") return true;
  return error instanceof Error && error.message === "Query read timeout";
}

/** A serialization failure or deadlock: the transaction may run again. */
export function isConflict(error: unknown): boolean {
  return CONFLICT_STATES.has(codeOf(error) ?? "");
}

/** The database connection is lost or the server unreachable, frozen or shutting down. */
export function isConnectionFault(error: unknown): boolean {
  if (error instanceof AppError) return error.code === "DATABASE_UNAVAILABLE";
  const code = codeOf(error);
  if (code) {
    if (UNAVAILABLE_STATES.has(code) || UNAVAILABLE_SYSCALLS.has(code)) return true;
    if (code.length === 5 && UNAVAILABLE_CLASSES.has(code.slice(0, 2))) return true;
  }
  const message = error instanceof Error ? error.message : "";
  return UNAVAILABLE_MESSAGES.some((m) => m.test(message));
}

/** SQLite could not take a lock another connection (another process) holds. */
export function isBusy(error: unknown): boolean {
  return BUSY_CODES.has(codeOf(error) ?? "");
}

/** The client-facing error of an unreachable database; the `cause` stays on the server. */
export function databaseUnavailable(cause?: unknown): AppError {
  return new AppError("DATABASE_UNAVAILABLE", "The database is unavailable; try again shortly", {
    cause,
  });
}

/** The client-facing error of a write lock held by another process for longer than allowed. */
export function databaseBusy(cause?: unknown): AppError {
  return new AppError("DATABASE_BUSY", "The database is locked by another writer; try again shortly", {
    cause,
  });
}

/** `error` as callers should see it: connection faults become {@link databaseUnavailable}. */
export function classifyDatabaseError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  if (isConnectionFault(error)) return databaseUnavailable(error);
  if (isBusy(error)) return databaseBusy(error);
  return error;
}

/**
 * A database file that cannot be opened (missing permissions, read-only directory, a directory
 * in its place). Its message is one line for the operator, naming the path and the reason.
 *
 * @example
 * ```ts
 * import { DatabaseOpenError, startService } from "service-auth/server";
 *
 * try {
 *   await startService({ ...app, databaseUrl: "/read-only/service.sqlite" });
 * } catch (error) {
 *   if (error instanceof DatabaseOpenError) console.error(`${error.path}: ${error.reason}`);
 *   throw error;
 * }
 * ```
 */
export class DatabaseOpenError extends StartRefusal {
  override name = "DatabaseOpenError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`cannot open the database file ${path}: ${reason}`);
  }
}
