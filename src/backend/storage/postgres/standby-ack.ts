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
 * The price: one statement behind each COMMIT, in the same round trip. A commit no standby has yet
 * waits, without its connection, for one poll of the standbys' progress shared by every waiting
 * commit (at most `standbyAckWaitMs`); no write is acknowledged while the primary has no standby.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { backoffDelayMs } from "../../../protocol/backoff.ts";
import { logger } from "../../logger.ts";
import { countStandbyAck } from "../../metrics/metrics.ts";
import { RETRY_POLICIES } from "../../retry/policies.ts";
import { StartRefusal } from "../../start-refusal.ts";
import { databaseUnavailable } from "../db-errors.ts";
import { walBytes } from "./read-freshness.ts";
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
const ACK_SQL = `SELECT ${walBytes("l.lsn")} AS lsn, COALESCE(${STANDBY_FLUSHED} >= l.lsn, false) AS flushed
  FROM (SELECT pg_current_wal_flush_lsn() AS lsn) l`;

/** Polled while commits wait: how far the standbys have flushed (null: no standby). */
const FLUSHED_SQL = `SELECT ${walBytes(STANDBY_FLUSHED)} AS flushed`;

/** What the engine's role must be able to do for the check (asked once, at start). */
const PRECONDITIONS_SQL = `SELECT current_setting('synchronous_commit') AS synchronous_commit,
  current_setting('is_superuser') = 'on' OR pg_has_role('pg_read_all_stats', 'USAGE') AS sees_standbys,
  current_user AS role`;

interface Waiter {
  /** The WAL position to wait for, in bytes (`walBytes`). */
  lsn: number;
  deadline: number;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The acknowledgement of commits for `DATABASE_DURABILITY=standby`. `query` runs a statement on
 * the primary (a pooled connection); a commit waits at most `waitMs` for a standby to flush it.
 */
export class StandbyAck implements CommitAcknowledgement {
  readonly statement: pg.QueryConfig = { name: "service_auth_standby_ack", text: ACK_SQL };
  private readonly waiters = new Set<Waiter>();
  private polling = false;

  constructor(
    private readonly query: (sql: string) => Promise<{ flushed: string | null }[]>,
    private readonly waitMs: number,
  ) {}

  confirm(answer: pg.QueryResult): Promise<void> | undefined {
    const row = answer.rows[0] as { lsn: string; flushed: boolean };
    if (row.flushed) {
      countStandbyAck("flushed");
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      this.waiters.add({ lsn: Number(row.lsn), deadline: Date.now() + this.waitMs, resolve, reject });
      if (!this.polling) void this.poll();
    });
  }

  /** Asks how far the standbys have flushed until no commit waits, sooner again after progress. */
  private async poll(): Promise<void> {
    this.polling = true;
    try {
      // Rounds in a row that confirmed nothing.
      for (let idle = 0; this.waiters.size > 0; ) {
        await sleep(backoffDelayMs(RETRY_POLICIES.standbyAckPoll, idle));
        let flushed: number | undefined;
        try {
          const [row] = await this.query(FLUSHED_SQL);
          flushed = row?.flushed ? Number(row.flushed) : undefined;
        } catch {
          // The primary unreachable: commits wait on, up to their deadline.
        }
        const now = Date.now();
        let confirmed = false;
        for (const waiter of this.waiters) {
          if (flushed !== undefined && waiter.lsn <= flushed) {
            this.waiters.delete(waiter);
            countStandbyAck("waited");
            waiter.resolve();
            confirmed = true;
          } else if (now >= waiter.deadline) {
            this.waiters.delete(waiter);
            countStandbyAck("unconfirmed");
            logger.warn("PostgreSQL commit not flushed by any standby in time: answered as unavailable", {
              waitMs: this.waitMs,
            });
            waiter.reject(databaseUnavailable());
          }
        }
        idle = confirmed ? 0 : idle + 1;
      }
    } finally {
      this.polling = false;
    }
  }
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
