/**
 * The commit log on SQLite, for cluster mode (several server processes on one database file):
 * the same `_commit_log` table and follower as PostgreSQL's (`commit-log.ts`,
 * `commit-log/follower.ts`), written in the committing transaction, so a process that sees a commit
 * in its read snapshot can also read that commit's write set from the log, whether or not the
 * wake-up announcing it has arrived.
 *
 * Order needs no lock here: SQLite has one writer at a time, so numbers are drawn in commit
 * order. `AUTOINCREMENT` keeps a pruned number from being drawn again.
 */
import { COMMIT_LOG_TABLE, followerStatements } from "../commit-log/log.ts";
import { sqliteDialect } from "../sql/dialect.ts";
import { quote } from "../sql/names.ts";

const LOG = quote(COMMIT_LOG_TABLE);

/**
 * A fast wake-up between the processes of one cluster (through the cluster's primary): the log is
 * the record, this only makes the others read it sooner — like NOTIFY on PostgreSQL.
 */
export interface CommitWakeups {
  /** Tells the other processes that commit `seq` is in the log. */
  publish(seq: number): void;
  /** Calls `listener` with every number another process published; returns the unsubscribe. */
  subscribe(listener: (seq: number) => void): () => void;
}

/** Cluster mode of the SQLite engine (`SqliteOptions.commitLog`). */
export interface SqliteCommitLogOptions {
  /** How the other processes are woken up after a commit. */
  wakeups: CommitWakeups;
  /** Log rows kept (default 10,000): older ones are deleted by a committing transaction now and then. */
  keep?: number;
  /** Period of the background catch-up, ms (default 500): the bound on delay if a wake-up is lost. */
  pollIntervalMs?: number;
}

/** Default of {@link SqliteCommitLogOptions.keep}. */
export const DEFAULT_LOG_KEEP = 10_000;
/** Every this many of its own commits, a process deletes the rows beyond `keep` in the same transaction. */
export const PRUNE_EVERY = 256;

export const SQLITE_FOLLOWER_STATEMENTS = followerStatements(sqliteDialect);

/** The log table (idempotent; run under the write lock at start). */
export const SQLITE_LOG_SCHEMA = `CREATE TABLE IF NOT EXISTS ${LOG} (seq INTEGER PRIMARY KEY AUTOINCREMENT, origin TEXT NOT NULL, writes TEXT)`;

/** Appends a commit inside the committing transaction (its number is the row id). */
export const SQLITE_APPEND_SQL = `INSERT INTO ${LOG} (origin, writes) VALUES (?, ?)`;

/** Deletes every row numbered up to `?` (run in a committing transaction). */
export const SQLITE_PRUNE_UPTO_SQL = `DELETE FROM ${LOG} WHERE seq <= ?`;

/**
 * The newest number a snapshot sees (no row: null). Run in a read transaction it also fixes the
 * snapshot when it is the transaction's first read, so the request's later reads see no commit
 * newer than the one compared.
 */
export const SQLITE_SNAPSHOT_HEAD_SQL = `SELECT seq FROM ${LOG} ORDER BY seq DESC LIMIT 1`;
