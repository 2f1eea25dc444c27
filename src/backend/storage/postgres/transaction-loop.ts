/**
 * The PostgreSQL transaction loop: a connection, `BEGIN`, the body, `COMMIT`, and what to do when
 * one of them fails — run again after a serialization failure or deadlock, reconnect when a pooled
 * connection turns out dead before anything ran or its server no longer the primary (read-only:
 * nothing committed there), and otherwise end as a typed error.
 */
import type pg from "pg";
import { backoffDelayMs } from "../../../protocol/backoff.ts";
import { AppError } from "../../errors.ts";
import { logger } from "../../logger.ts";
import { dbMetrics } from "../../metrics/metrics.ts";
import { RETRY_POLICIES } from "../../retry/policies.ts";
import {
  classifyDatabaseError,
  databaseUnavailable,
  isConflict,
  isConnectionFault,
  isStatementTimeout,
} from "../db-errors.ts";
import type { SqlStatements } from "../sql/statements.ts";
import type { PostgresPools } from "./pools.ts";
import { isServerReadOnly, ServerNotPrimaryError } from "./primary-locator.ts";
import type { PgReader } from "./transaction.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where a transaction attempt failed, which decides whether it may run again. */
type Phase = "begin" | "body" | "commit";

/** How to open one kind of transaction. */
export interface TransactionKind<Tx extends PgReader> {
  /** The opening statements (one round trip). */
  begin: string;
  Transaction: new (client: pg.PoolClient, sql: SqlStatements) => Tx;
  /**
   * Reads what the opening statements answered (e.g. the commit log head); a promise it returns
   * is part of the opening (the body's statements answer once it resolved; rejected, the
   * transaction fails with its reason).
   */
  onBegin?: (tx: Tx, begun: unknown, before?: unknown, after?: unknown) => void | Promise<void>;
  /**
   * A statement sent (in the same round trip) right before `begin`, outside the transaction, so
   * it runs before the snapshot is taken; `onBegin` gets its answer. Pipelined kinds only.
   */
  before?: string;
  /**
   * A statement sent (in the same round trip) right behind `begin`, inside the transaction, named
   * so that it is planned once per connection; `onBegin` gets its answer. Pipelined kinds only.
   */
  after?: pg.QueryConfig;
  /**
   * For a body that trusted something before `begin` was answered (`tx.trustedAt`): undefined
   * when that stands, else a promise to await before the body runs again, non-speculatively.
   */
  confirm?: (tx: Tx) => Promise<void> | undefined;
  /**
   * The body's statements go out behind `begin` without waiting for its answer (one round trip
   * for both); their answers count only once `begin` succeeded. For read-only snapshots: a
   * statement sent behind a `BEGIN` that failed runs on its own, which a read may, a write not.
   * A pipelined read whose statements all succeeded is answered without waiting for its COMMIT.
   */
  pipelined?: boolean;
  /**
   * A write: its COMMIT must come back without a warning, or it is not acknowledged (see
   * {@link watchCommitWarnings}).
   */
  write?: boolean;
  /**
   * For writes: what decides, after COMMIT succeeded, whether the commit may be acknowledged
   * (`DATABASE_DURABILITY=standby`, postgres/standby-ack.ts). Its statement goes out right behind
   * COMMIT, in the same round trip.
   */
  acknowledge?: CommitAcknowledgement;
}

/** A check run behind a write's COMMIT before the commit is acknowledged (see {@link TransactionKind.acknowledge}). */
export interface CommitAcknowledgement {
  /** Sent right behind COMMIT (run whatever COMMIT answers). */
  statement: pg.QueryConfig;
  /**
   * Given the statement's answer after a successful COMMIT: undefined when the commit may be
   * acknowledged, else a promise that resolves once it may or rejects (`DATABASE_UNAVAILABLE`).
   * The transaction's connection is back in the pool while that promise is pending.
   */
  confirm(answer: pg.QueryResult): Promise<void> | undefined;
}

/**
 * Listens for a warning while COMMIT runs. PostgreSQL answers a COMMIT whose wait for the
 * synchronous standby was cancelled (`pg_cancel_backend`, a pooler's cancel request) with success and a
 * WARNING (SQLSTATE 01000, "committed locally, but might not have been replicated"): acknowledged,
 * that commit could vanish in a failover. Nothing else warns at an engine transaction's COMMIT.
 * The code is checked, not the (translated) message.
 */
function watchCommitWarnings(client: pg.PoolClient): () => boolean {
  let warned = false;
  const notice = (message: { code?: string }) => {
    if (message.code === "01000") warned = true;
  };
  client.on("notice", notice);
  return () => {
    client.off("notice", notice);
    return warned;
  };
}

const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/**
 * COMMIT, sent right behind the body's last statement when that one is still unanswered
 * (`tx.beforeCommit`, one round trip for both). If that statement failed, PostgreSQL rolls back
 * instead of committing (and answers COMMIT with ROLLBACK): its error is the outcome. With an
 * acknowledgement check its statement follows COMMIT in the same round trip; its answer is
 * returned, for the caller to confirm the commit with.
 */
async function commit(
  client: pg.PoolClient,
  tx: PgReader,
  ack?: CommitAcknowledgement,
): Promise<pg.QueryResult | undefined> {
  const committing = client.query("COMMIT");
  const acking = ack ? client.query(ack.statement) : undefined;
  // Awaited once COMMIT succeeded; this only keeps an early failure from counting as unhandled.
  acking?.catch(() => {});
  tx.uncork();
  if (tx.beforeCommit) {
    try {
      await tx.beforeCommit;
    } catch (error) {
      await committing.catch(() => {});
      throw error;
    }
  }
  const answer = await committing;
  if (answer.command === "ROLLBACK") throw new Error("PostgreSQL rolled the transaction back at COMMIT");
  try {
    return await acking;
  } catch (error) {
    // Committed but unconfirmed: the outcome is unknown to the caller (a lost connection stays
    // one, so that the loop discards the connection).
    throw isConnectionFault(error) ? error : databaseUnavailable(error);
  }
}

/** COMMIT of a settled read-only snapshot, not waited for (see where it is called). */
function commitUnawaited(client: pg.PoolClient, tx: PgReader): void {
  const committing = client.query("COMMIT");
  tx.uncork();
  committing.then(
    (answer) => {
      if (answer.command === "ROLLBACK")
        logger.warn("PostgreSQL rolled a settled read snapshot back at COMMIT");
    },
    // The connection's own 'error' (postgres/pools.ts) reports a lost connection; this is for anything else.
    (error) => {
      if (!isConnectionFault(error))
        logger.warn("PostgreSQL read snapshot's COMMIT failed", { error: String(error) });
    },
  );
}

/**
 * Runs `fn` in a transaction of `kind`, on a connection of its own. Runs it again after a
 * serialization failure or deadlock (with a growing, jittered backoff, at most `maxAttempts`
 * times), and once on a fresh connection when the pooled one turned out dead at BEGIN (nothing
 * ran). A lost connection or an unanswered statement ends as `DATABASE_UNAVAILABLE`, whatever
 * `fn` made of the error; the connection is then discarded, never returned to the pool.
 */
export async function runTransaction<T, Tx extends PgReader>(
  pools: PostgresPools,
  sql: SqlStatements,
  kind: TransactionKind<Tx>,
  maxAttempts: number,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  let reconnected = false;
  let moved = false;
  let speculative = true;
  for (let attempt = 1; ; attempt++) {
    const client = await pools.connect();
    const tx = new kind.Transaction(client, sql);
    tx.speculative = speculative && kind.confirm !== undefined;
    let phase: Phase = "begin";
    // A connection whose BEGIN, COMMIT or ROLLBACK failed is not returned to the pool.
    let broken: unknown;
    try {
      let result: T;
      if (kind.pipelined) {
        const opened = tx.open(kind.begin, kind.onBegin, kind.before, kind.after);
        const body = fn(tx);
        // The body may finish (or fail) only after BEGIN was answered: its statements wait for it.
        const [opening, outcome] = await Promise.allSettled([opened, body]);
        if (opening.status === "rejected") throw opening.reason;
        phase = "body";
        const catchingUp = tx.trustedAt !== undefined ? kind.confirm?.(tx) : undefined;
        if (catchingUp) {
          // What the body trusted may be stale (result and error alike): once caught up, run it again.
          await catchingUp;
          await client.query("COMMIT");
          speculative = false;
          continue;
        }
        if (outcome.status === "rejected") throw outcome.reason;
        result = outcome.value;
      } else {
        const begun = await client.query(kind.begin);
        const ready = kind.onBegin?.(tx, begun);
        if (ready) await ready;
        phase = "body";
        result = await fn(tx);
      }
      phase = "commit";
      if (kind.pipelined && !kind.write && tx.settled) {
        // A read-only snapshot whose statements all succeeded: its COMMIT commits nothing and can
        // fail only with the connection. Answered without waiting for it, and the connection goes
        // back to the pool at once: the next transaction on it queues behind COMMIT (pipeline
        // mode), and a connection lost meanwhile fails that one at BEGIN, which reconnects
        // (docs/decisions.md 36).
        commitUnawaited(client, tx);
        return result;
      }
      // Awaited for writes, and for a read whose statement failed (its COMMIT answers ROLLBACK).
      const warnings = kind.write ? watchCommitWarnings(client) : undefined;
      let warned = false;
      let acked: pg.QueryResult | undefined;
      try {
        acked = await commit(client, tx, kind.acknowledge);
      } finally {
        warned = warnings?.() ?? false;
      }
      if (warned) {
        logger.warn("PostgreSQL commit not confirmed by the synchronous standby: answered as unavailable");
        // Outcome unknown to the caller, as for a connection lost at COMMIT; the follower delivers it if it stays.
        throw databaseUnavailable();
      }
      const waiting = acked && kind.acknowledge?.confirm(acked);
      // Waited for without the connection, released as this returns: it may take a while.
      if (waiting) return waiting.then(() => result);
      return result;
    } catch (error) {
      tx.uncork();
      const fault = pools.lostReason(client) ?? tx.fault ?? (isConnectionFault(error) ? error : undefined);
      if (isStatementTimeout(error) || (fault !== error && isStatementTimeout(fault)))
        dbMetrics.statementTimedOut();
      const notPrimary =
        fault === undefined
          ? (tx.notPrimary ??
            (error instanceof ServerNotPrimaryError || (kind.write && isServerReadOnly(error))
              ? error
              : undefined))
          : undefined;
      if (notPrimary !== undefined) {
        // The server is no longer the primary (a switchover fencing it): nothing committed there
        // (a refused write rolls back), so the body runs again on a connection to the new one.
        pools.retire(client);
        broken = notPrimary;
        if (!moved) {
          moved = true;
          dbMetrics.retried("reconnect");
          continue;
        }
        logger.warn("PostgreSQL transaction failed: no primary", { phase, error: String(notPrimary) });
        throw databaseUnavailable();
      }
      if (fault === undefined) {
        await client.query("ROLLBACK").catch((e) => (broken = e));
      } else {
        broken = fault;
      }
      if (broken === undefined && (tx.conflicted || isConflict(error))) {
        if (attempt >= maxAttempts) {
          throw new AppError(
            "CONFLICT",
            "The transaction kept conflicting with concurrent writes; try again",
          );
        }
        dbMetrics.retried("conflict");
        await sleep(backoffDelayMs(RETRY_POLICIES.transactionConflict, attempt));
        continue;
      }
      if (fault === undefined) throw broken === undefined ? error : classifyDatabaseError(broken);
      if (phase === "begin" && !reconnected) {
        // A pooled connection that died while idle (server restart): nothing ran, try a new one.
        reconnected = true;
        dbMetrics.retried("reconnect");
        continue;
      }
      logger.warn("PostgreSQL transaction failed: database unavailable", { phase, error: String(fault) });
      // At COMMIT the outcome is unknown: the client is told to try again, like for any outage.
      throw databaseUnavailable();
    } finally {
      client.release(broken === undefined ? undefined : asError(broken));
    }
  }
}
