/**
 * Writes acknowledged only once a standby has them (`DATABASE_DURABILITY=standby`).
 *
 * Invariant: with `durability: "standby"`, a write transaction is reported committed only after
 * its server said that a streaming standby has flushed its WAL up to the server's flush position
 * read right behind the COMMIT. That position covers the commit: COMMIT returns only once its
 * record is flushed locally (`synchronous_commit` is not `off`, checked at start). Otherwise the
 * caller gets `DATABASE_UNAVAILABLE`, as for a connection lost at COMMIT: the outcome is unknown
 * (the commit stays on the primary and reaches the other instances if that primary does).
 *
 * Why: synchronous replication makes COMMIT wait for a standby only while the server's
 * `synchronous_standby_names` names one it has. A failover manager empties it when the standby
 * fails (pg_auto_failover's `wait_primary`), and a primary that is asynchronous for whatever
 * reason while the standby is promoted (a manager's race, an operator's mistake) acknowledges
 * writes the new primary never gets: acknowledged revocations are undone. This check asks the
 * server itself, after each commit, instead of trusting its configuration.
 *
 * The price: one statement behind each COMMIT, in the same round trip; a wait (polled, at most
 * `standbyAckWaitMs`) only while no standby has caught up; and no write is
 * acknowledged while the primary has no standby at all.
 */
import type pg from "pg";
import { logger } from "../../logger.ts";
import { countStandbyAck } from "../../metrics/metrics.ts";
import { StartRefusal } from "../../start-refusal.ts";
import { databaseUnavailable, isConnectionFault } from "../db-errors.ts";
import type { CommitAcknowledgement } from "./transaction-loop.ts";

/**
 * The newest WAL position a physical standby (or WAL receiver) streaming from this server has
 * flushed. Logical replication's senders (their slot is `logical`) and base backups do not count:
 * neither is a standby a failover could promote.
 */
const STANDBY_FLUSHED = `(SELECT max(s.flush_lsn) FROM pg_stat_get_wal_senders() s
  WHERE s.state IN ('streaming', 'catchup')
    AND NOT EXISTS (SELECT 1 FROM pg_replication_slots r WHERE r.slot_type = 'logical' AND r.active_pid = s.pid))`;

/** Sent behind COMMIT: the flush position (which covers the commit) and whether a standby has it. */
const ACK_SQL = `SELECT l.lsn::text AS lsn, COALESCE(${STANDBY_FLUSHED} >= l.lsn, false) AS flushed
  FROM (SELECT pg_current_wal_flush_lsn() AS lsn) l`;

/** Asked again while waiting: whether a standby has flushed `$1` now. */
const FLUSHED_SQL = `SELECT COALESCE(${STANDBY_FLUSHED} >= $1::pg_lsn, false) AS flushed`;

/** What the engine's role must be able to do for the check (asked once, at start). */
const PRECONDITIONS_SQL = `SELECT current_setting('synchronous_commit') AS synchronous_commit,
  current_setting('is_superuser') = 'on' OR pg_has_role('pg_read_all_stats', 'USAGE') AS sees_standbys,
  current_user AS role`;

/** Longest pause between two looks at the standbys' progress while a commit waits, ms. */
const MAX_POLL_MS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The acknowledgement of commits for `DATABASE_DURABILITY=standby`: waits at most `waitMs` for a
 * standby to flush a commit.
 */
export function standbyAck(waitMs: number): CommitAcknowledgement {
  return {
    statement: { name: "service_auth_standby_ack", text: ACK_SQL },
    confirm(answer, client) {
      const row = answer.rows[0] as { lsn: string; flushed: boolean };
      if (row.flushed) {
        countStandbyAck("flushed");
        return undefined;
      }
      return waitForStandby(client, row.lsn, Date.now() + waitMs, waitMs);
    },
  };
}

/** Polls until a standby flushed `lsn`, or fails the write once `deadline` passed. */
async function waitForStandby(
  client: pg.PoolClient,
  lsn: string,
  deadline: number,
  waitMs: number,
): Promise<void> {
  for (let pause = 1; Date.now() + pause <= deadline; pause = Math.min(pause * 2, MAX_POLL_MS)) {
    await sleep(pause);
    let flushed: boolean;
    try {
      const { rows } = await client.query<{ flushed: boolean }>({
        name: "service_auth_standby_flushed",
        text: FLUSHED_SQL,
        values: [lsn],
      });
      flushed = rows[0].flushed;
    } catch (error) {
      // A lost connection is the transaction loop's to report (and the connection is discarded).
      if (isConnectionFault(error)) throw error;
      countStandbyAck("unconfirmed");
      throw databaseUnavailable(error);
    }
    if (flushed) {
      countStandbyAck("waited");
      return;
    }
  }
  countStandbyAck("unconfirmed");
  logger.warn("PostgreSQL commit not flushed by any standby in time: answered as unavailable", { waitMs });
  throw databaseUnavailable();
}

/**
 * Refuses the start when the check could not keep its promise: a role that cannot see its
 * standbys' progress (it would refuse every write), or COMMIT returning before its record is
 * flushed (the position read behind it would not cover it).
 */
export async function checkStandbyAckPreconditions(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ synchronous_commit: string; sees_standbys: boolean; role: string }>(
    PRECONDITIONS_SQL,
  );
  const { synchronous_commit: synchronousCommit, sees_standbys: seesStandbys, role } = rows[0];
  const problems: string[] = [];
  if (!seesStandbys) {
    problems.push(
      `the role "${role}" cannot see its standbys' progress (pg_stat_replication): GRANT pg_monitor TO "${role}";`,
    );
  }
  if (synchronousCommit === "off") {
    problems.push(
      `synchronous_commit is off for the role "${role}", so COMMIT returns before its record is flushed: ALTER ROLE "${role}" SET synchronous_commit = on;`,
    );
  }
  if (problems.length) {
    throw new StartRefusal(
      `DATABASE_DURABILITY=standby cannot be kept:\n${problems.map((p) => `  - ${p}`).join("\n")}\nFix the database, or unset DATABASE_DURABILITY.`,
    );
  }
}
