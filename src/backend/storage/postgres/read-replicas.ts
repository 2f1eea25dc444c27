/**
 * Read snapshots on streaming standbys (`DATABASE_READ_URLS`), without weakening what a read on
 * the primary promises: it sees every commit acknowledged before it was asked for — revocations
 * and bans for step 2, the caller's own mutation for its next query.
 *
 * A read takes a replay target (the primary's WAL position, `read-freshness.ts`) and opens its
 * replica snapshot at the same time, so the two round trips overlap. The snapshot's statements
 * answer the body only once the target arrived and the snapshot proved fresh; a stale one is rolled
 * back, the read waits (at most `DATABASE_READ_WAIT_MS` from its start) for the replica to replay
 * up to the target, and runs again there — or on the primary when the wait runs out or the replica
 * fails (its outage breaker trips, `replica.ts`). A primary that cannot be asked for the target
 * fails the read (503), as a primary read would.
 */
import { logger } from "../../logger.ts";
import { replicaMetrics } from "../../metrics/metrics.ts";
import { READ_BEGIN, snapshotHead } from "../commit-log/log.ts";
import { classifyDatabaseError, isConnectionFault } from "../db-errors.ts";
import type { SqlStatements } from "../sql/statements.ts";
import type { PostgresOptions } from "./options.ts";
import {
  confirmFresh,
  positionOf,
  REPLAY_TARGET_SQL,
  REPLAYED_SQL,
  ReplayTargets,
  ReplayTargetUnavailable,
  StaleSnapshot,
} from "./read-freshness.ts";
import { ForeignReplica, Replica, type ReplicaGate, type ReplicaState } from "./replica.ts";
import { PgReader } from "./transaction.ts";
import { runTransaction, type TransactionKind } from "./transaction-loop.ts";

/** Default bound on a read's wait for a replica to replay its target, ms (`DATABASE_READ_WAIT_MS`). */
export const DEFAULT_READ_WAIT_MS = 50;

/** Attempts of a replica read before the primary takes over (recovery conflicts are 40001). */
const REPLICA_ATTEMPTS = 3;

/** What the engine lends the replicas. */
export interface ReadReplicasDeps {
  options: PostgresOptions;
  /** Runs one statement on the primary, outside any transaction (the replay targets). */
  queryPrimary(sql: string): Promise<Record<string, unknown>[]>;
  /** The statements of the migrated layout (they change at migration). */
  statements(): SqlStatements;
  /** The engine's confirmation of identities trusted before the snapshot's head was known. */
  confirm(tx: PgReader): Promise<void> | undefined;
}

export class ReadReplicas {
  private readonly replicas: Replica[];
  private readonly targets: ReplayTargets;
  private readonly waitMs: number;
  private next = 0;

  constructor(
    urls: readonly string[],
    private readonly deps: ReadReplicasDeps,
  ) {
    this.replicas = urls.map((url, i) => new Replica(url, deps.options, i));
    this.targets = new ReplayTargets(async () => {
      const position = positionOf(await deps.queryPrimary(REPLAY_TARGET_SQL));
      if (position === undefined) throw new Error("the primary reported no WAL position");
      return position;
    });
    this.waitMs = deps.options.readWaitMs ?? DEFAULT_READ_WAIT_MS;
  }

  /**
   * Checks every replica against `gate` (the primary's identity and position after the
   * migration). An unreachable or not yet migrated replica is checked again later; a server of
   * another cluster refuses the start.
   */
  async start(gate: ReplicaGate): Promise<void> {
    const checks = await Promise.allSettled(this.replicas.map((r) => r.check(gate)));
    for (const check of checks) {
      if (check.status === "rejected" && check.reason instanceof ForeignReplica) throw check.reason;
    }
  }

  /** Each replica's state, in `DATABASE_READ_URLS` order. */
  states(): ReplicaState[] {
    return this.replicas.map((r) => r.status);
  }

  /** The next ready replica, round robin; undefined when none is. */
  private pick(): Replica | undefined {
    const n = this.replicas.length;
    for (let i = 0; i < n; i++) {
      const replica = this.replicas[(this.next + i) % n];
      if (replica.ready) {
        this.next = (this.next + i + 1) % n;
        return replica;
      }
    }
    return undefined;
  }

  /** Why no replica takes a read now. */
  private noneReason() {
    return this.replicas.some((r) => r.status === "lagging") ? "primary_lagging" : "primary_none_ready";
  }

  /**
   * Runs `fn` in a read snapshot on a replica that is fresh for this moment, else through
   * `primary` (the engine's own read).
   */
  async read<T>(fn: (tx: PgReader) => Promise<T>, primary: () => Promise<T>): Promise<T> {
    const replica = this.pick();
    if (!replica) {
      replicaMetrics.read(this.noneReason());
      return primary();
    }
    const started = performance.now();
    const target = this.targets.target();
    const kind = this.snapshotKind(target, replica);
    let waited = false;
    for (;;) {
      try {
        // Through the replica's breaker: one that stops answering is given up at its probe, not
        // at the pool's timeouts; its refusal (`DATABASE_UNAVAILABLE`) is a connection fault below.
        const value = await replica.breaker.run(() =>
          runTransaction(replica.pools, this.deps.statements(), kind, REPLICA_ATTEMPTS, fn),
        );
        replicaMetrics.read(waited ? "replica_waited" : "replica_fresh");
        if (waited) replicaMetrics.waited((performance.now() - started) / 1000);
        return value;
      } catch (error) {
        if (error instanceof StaleSnapshot) {
          replica.saw(error.replayed);
          waited = true;
          if (await replica.caughtUp(error.required, started + this.waitMs)) continue;
          replicaMetrics.waited((performance.now() - started) / 1000);
          replicaMetrics.read("primary_stale");
          return primary();
        }
        if (error instanceof ReplayTargetUnavailable) throw classifyDatabaseError(error.cause);
        if (isConnectionFault(error) || isReplicaConflict(error)) {
          // The replica's trouble, not the read's: the primary answers it.
          replica.failed(error);
          replicaMetrics.read("primary_unavailable");
          logger.warn("read replica failed; the primary answers", {
            replica: replica.label,
            error: String(error),
          });
          return primary();
        }
        throw error;
      }
    }
  }

  /**
   * The snapshot of one read: the replica's replay position, read right before `READ_BEGIN` (with
   * the commit number the snapshot sees, for the identity cache), fresh only for `target`
   * (`read-freshness.ts`); its statements answer only once that is proven.
   */
  private snapshotKind(target: Promise<number>, replica: Replica): TransactionKind<PgReader> {
    return {
      before: REPLAYED_SQL,
      begin: READ_BEGIN,
      Transaction: PgReader,
      pipelined: true,
      onBegin: (tx, begun, before) => {
        tx.logHead = snapshotHead(begun);
        const replayed = positionOf(before);
        if (replayed !== undefined) replica.saw(replayed);
        return target.then((required) => confirmFresh(replayed, required));
      },
      confirm: this.deps.confirm,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.close()));
  }
}

/** A replica read given up after its attempts (recovery conflicts cancel standby queries with 40001). */
function isReplicaConflict(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "CONFLICT";
}
