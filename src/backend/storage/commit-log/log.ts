/**
 * The commit log: one row per commit, written in the same transaction as the commit, numbered
 * from a sequence. It is the record other instances follow (`commit-log/follower.ts`); NOTIFY only
 * wakes them up sooner. The statements below are PostgreSQL's except the follower's
 * ({@link followerStatements}), which SQLite's cluster mode shares (`sqlite/commit-log.ts`).
 *
 * Order without a lock: a committing transaction draws its number in its last statement, sent
 * together with COMMIT (one round trip, `postgres/transaction-loop.ts`), and nothing is held across
 * its commit — commits of all instances flush the WAL together. Numbers therefore do not follow
 * commit order exactly: number N may become visible before N-1 does. What a reader needs holds
 * anyway, stated for the follower's cursor: **the cursor passes N only once every commit numbered
 * N or less is visible (or will never be)**, because a missing number below a visible one holds
 * the cursor until every transaction that may have drawn it has ended ({@link DRAWERS_SQL}). A
 * snapshot whose newest number is H therefore sees no commit that an instance whose cursor is at H
 * or beyond has not delivered — the check a request makes before trusting a cached identity
 * (`postgres/engine.ts`, `syncExternalCommits`). Numbers of rolled-back transactions stay unused:
 * gaps are normal.
 *
 * Changes that do not come through the engine (an operator's `DELETE` in psql) are logged by a
 * deferred trigger on every document table as an unknown write set; the engine's own transactions
 * set `service_auth.engine` locally, which the trigger's WHEN clause skips.
 */
import type { SqlDialect } from "../sql/dialect.ts";
import { quote } from "../sql/names.ts";

/** The log table. */
export const COMMIT_LOG_TABLE = "_commit_log";
/** Origin recorded for commits the trigger logs (made by SQL outside the engine). */
export const EXTERNAL_ORIGIN = "sql";
/** Write sets larger than this are logged as unknown: every instance reads every log row. */
export const MAX_LOGGED_BYTES = 256 * 1024;

const LOG = quote(COMMIT_LOG_TABLE);
const SEQUENCE = quote(`${COMMIT_LOG_TABLE}_seq_seq`);
const TRIGGER = "_commit_log_external";
const TRUNCATE_TRIGGER = "_commit_log_external_truncate";
const FUNCTION = quote("_commit_log_external");

/** Marks a transaction as the engine's: the trigger skips what it writes. */
const ENGINE_TRANSACTION = "SET LOCAL service_auth.engine = '1'";
/** Opening statements (one round trip) of the engine's write transactions. */
export const ENGINE_WRITE_BEGIN = `BEGIN ISOLATION LEVEL SERIALIZABLE; ${ENGINE_TRANSACTION}`;
/**
 * Opening statements (one round trip) of a read snapshot, with the newest commit number the
 * snapshot sees: an instance that has delivered up to it may trust its cached identities for a
 * request answered from this snapshot, without a round trip of its own. (Read-only REPEATABLE
 * READ: no predicate locks, so this read never makes writers conflict.)
 */
export const READ_BEGIN = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT seq FROM ${LOG} ORDER BY seq DESC LIMIT 1`;
// `ORDER BY … LIMIT 1`, not `max(seq)`: it is planned on every BEGIN, and the aggregate's plan
// added about twice as much to a read transaction in a measurement.

/** The commit number `READ_BEGIN` answered (its results, one per statement); 0 for an empty log. */
export function snapshotHead(results: unknown): number | undefined {
  const last = Array.isArray(results) ? results[results.length - 1] : undefined;
  const rows = (last as { rows?: { seq?: unknown }[] } | undefined)?.rows;
  if (!rows) return undefined;
  return rows.length ? Number(rows[0].seq) : 0;
}

/**
 * Opening statements of a layout migration: its backfill must not leave trigger events pending
 * (PostgreSQL then refuses the CREATE INDEX that follows), and changes no document anyway.
 */
export const MIGRATION_BEGIN = `BEGIN; ${ENGINE_TRANSACTION}`;

/** One logged commit; `writes` null means its write set is unknown. */
export interface LoggedCommit {
  seq: number;
  origin: string;
  writes: string | null;
}

/**
 * Appends a commit inside the committing transaction; returns its number. Sent right before
 * COMMIT without waiting (the transaction holds the log's row lock only while it commits, which is
 * what {@link DRAWERS_SQL} relies on).
 */
export const APPEND_SQL = `INSERT INTO ${LOG} (origin, writes) VALUES ($1, $2) RETURNING seq`;

/**
 * The newest number drawn so far (`drawn`), then the transactions that hold the log's write lock
 * (`drawers`: INSERT takes it before drawing a number and keeps it to the end of the transaction).
 * Read in this order, every number up to `drawn` belongs to one of `drawers` or to a transaction
 * that has ended — and a transaction that ended is visible (or rolled back) before its locks go.
 * The lateral reference makes the lock list wait for the sequence's row.
 */
export const DRAWERS_SQL = `SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END AS drawn,
  ARRAY(SELECT l.virtualtransaction FROM pg_locks l
    WHERE l.locktype = 'relation' AND l.mode = 'RowExclusiveLock' AND s.last_value IS NOT NULL
      AND l.relation = '${LOG}'::regclass AND l.pid <> pg_backend_pid()
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS drawers
FROM ${SEQUENCE} s`;

/**
 * The statements a follower (`commit-log/follower.ts`) reads the log with, in one SQL dialect: the
 * same table and columns on every engine that keeps the log (PostgreSQL; SQLite in cluster mode,
 * `sqlite/commit-log.ts`).
 */
export interface FollowerStatements {
  /** The next commits after parameter 1, oldest first, at most parameter 2. */
  readAfter: string;
  /** The newest number (0 for an empty log). */
  head: string;
  /** The oldest number still kept (null for an empty log). */
  oldest: string;
  /** Drops all but the newest (parameter 1) numbers. */
  prune: string;
}

/** {@link FollowerStatements} with the placeholders of `dialect`. */
export function followerStatements(dialect: Pick<SqlDialect, "param">): FollowerStatements {
  const p = (n: number) => dialect.param(n);
  return {
    readAfter: `SELECT seq, origin, writes FROM ${LOG} WHERE seq > ${p(1)} ORDER BY seq LIMIT ${p(2)}`,
    head: `SELECT coalesce(max(seq), 0) AS seq FROM ${LOG}`,
    oldest: `SELECT min(seq) AS seq FROM ${LOG}`,
    prune: `DELETE FROM ${LOG} WHERE seq <= (SELECT max(seq) FROM ${LOG}) - ${p(1)}`,
  };
}

/** The PostgreSQL follower statements (`$n` placeholders). */
export const POSTGRES_FOLLOWER_STATEMENTS = followerStatements({ param: (n) => `$${n}` });

/** The next commits after `$1`, oldest first, at most `$2`. */
export const READ_AFTER_SQL = POSTGRES_FOLLOWER_STATEMENTS.readAfter;

/** The newest number (0 for an empty log). */
export const HEAD_SQL = POSTGRES_FOLLOWER_STATEMENTS.head;

/** The oldest number still kept (null for an empty log). */
export const OLDEST_SQL = POSTGRES_FOLLOWER_STATEMENTS.oldest;

/** Drops all but the newest `$1` numbers. */
export const PRUNE_SQL = POSTGRES_FOLLOWER_STATEMENTS.prune;

/** The log table and the trigger function (idempotent DDL, run at start under the migration lock). */
export function logSchemaSql(): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${LOG} (seq BIGSERIAL PRIMARY KEY, origin TEXT NOT NULL, writes TEXT)`,
    // Deferred to commit time, once per transaction: one unknown commit however many rows changed.
    `CREATE OR REPLACE FUNCTION ${FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  logged BIGINT;
BEGIN
  IF current_setting('service_auth.logged', true) = '1' THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('service_auth.logged', '1', true);
  INSERT INTO ${LOG} (origin, writes) VALUES ('${EXTERNAL_ORIGIN}', NULL) RETURNING seq INTO logged;
  BEGIN
    -- Only a wake-up: instances find the row by polling the log if this fails.
    PERFORM pg_notify(TG_ARGV[0], '${EXTERNAL_ORIGIN}:' || logged || ':*');
  EXCEPTION WHEN OTHERS THEN
    NULL;
  END;
  RETURN NULL;
END
$fn$`,
  ];
}

/** Physical tables (of `tables`) that have no external-change trigger yet. */
export const UNTRIGGERED_SQL = `SELECT t.name FROM unnest($1::text[]) AS t(name)
WHERE NOT EXISTS (
  SELECT 1 FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
  WHERE g.tgname = '${TRIGGER}' AND c.relname = t.name AND c.relnamespace = current_schema()::regnamespace
)`;

/** Triggers logging changes to `table` made outside the engine; they NOTIFY on `channel`. */
export function triggerSql(table: string, channel: string): string[] {
  const t = quote(table);
  const arg = `'${channel.replace(/'/g, "''")}'`;
  return [
    `CREATE CONSTRAINT TRIGGER ${quote(TRIGGER)} AFTER INSERT OR UPDATE OR DELETE ON ${t}
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
WHEN (current_setting('service_auth.engine', true) IS DISTINCT FROM '1')
EXECUTE FUNCTION ${FUNCTION}(${arg})`,
    `CREATE TRIGGER ${quote(TRUNCATE_TRIGGER)} AFTER TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION ${FUNCTION}(${arg})`,
  ];
}
