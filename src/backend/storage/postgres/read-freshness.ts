/**
 * Freshness of a read on a streaming standby, in WAL positions.
 *
 * The promise a replica read keeps is the primary's: it sees every commit acknowledged before the
 * read was asked for (a revocation, a ban, the caller's own mutation). A read's replay target
 * ({@link ReplayTargets}) is the primary's WAL insert position (`pg_current_wal_insert_lsn()`), read
 * by a statement sent after the read was asked for (not the consistency core's `Stamp`, which
 * counts the commits this process heard of). A commit is acknowledged (and visible) only after its
 * commit record was inserted into the WAL, so the target is at or past the end of every such commit's
 * record — also with `synchronous_commit = off`, where the record may not be written yet (the
 * write and flush positions could then be behind it; the insert position never is).
 *
 * A replica snapshot is fresh when the standby's replay position (`pg_last_wal_replay_lsn()`),
 * read by {@link REPLAYED_SQL} just BEFORE the snapshot was taken, is at least the target. The
 * standby advances that position only after it applied the record ending there, commit records
 * included (visible to snapshots taken afterwards), so a snapshot taken later sees every commit
 * whose record ends at or before it. The statement is sent in the same round trip as the
 * snapshot's BEGIN (pipeline mode, `transaction.ts`, `before`), as a statement of its own: read
 * inside the snapshot, the position could be past what the snapshot sees. No round trip is added.
 *
 * Why not commit log numbers (the newest `seq` the snapshot sees, as before): they are drawn
 * without a lock (docs/decisions.md 35), so number N+1 can commit, and be replayed, before N. A
 * snapshot seeing the primary's head N+1 may then miss N — acknowledged, e.g. a revocation
 * (test/postgres/read-replicas.test.ts reproduces it). The WAL is the one order both servers
 * share. Positions cover the whole cluster (other databases, DDL, commits that log no row), so a
 * replica may wait for more than the read needs, never for less. One cost: an idle primary whose
 * last record ended exactly on a WAL page boundary reports the insert position past the page
 * header, which no replay position equals until the next record; such reads wait their bound and
 * go to the primary meanwhile (slower, never stale).
 *
 * The snapshot's newest commit number (`READ_BEGIN`) is still read: the engine's identity cache
 * is confirmed against it (`engine.ts`), which numbers keep right (`commit-log/log.ts`).
 *
 * This is the one place that decides what "fresh" means for a replica; the rest only asks.
 */

/**
 * SQL for the WAL position `lsn` in bytes since `0/0`, as text: a number in JavaScript (exact
 * below 2^53 bytes, 8 PiB of WAL).
 */
export const walBytes = (lsn: string) => `(${lsn} - '0/0'::pg_lsn)::text`;
const BYTES = (lsn: string) => `${walBytes(lsn)} AS lsn`;

/** The primary's WAL insert position, read in a statement of its own: the replay target. */
export const REPLAY_TARGET_SQL = `SELECT ${BYTES("pg_current_wal_insert_lsn()")}`;

/** The standby's replay position, sent right before a snapshot's BEGIN (null when none yet). */
export const REPLAYED_SQL = `SELECT ${BYTES("pg_last_wal_replay_lsn()")}`;

/** The position {@link REPLAY_TARGET_SQL} or {@link REPLAYED_SQL} answered (rows, or a query result); undefined for none. */
export function positionOf(answer: unknown): number | undefined {
  const rows = Array.isArray(answer) ? answer : (answer as { rows?: unknown } | undefined)?.rows;
  const lsn = Array.isArray(rows) ? (rows[0] as { lsn?: unknown } | undefined)?.lsn : undefined;
  return typeof lsn === "string" ? Number(lsn) : undefined;
}

/** A replica snapshot older than the read's target: the read must wait for the replica, or go to the primary. */
export class StaleSnapshot extends Error {
  override name = "StaleSnapshot";
  constructor(
    /** The standby's replay position before the snapshot (-1 when unknown). */
    readonly replayed: number,
    /** The replay target: the primary's WAL insert position when the read was asked for. */
    readonly required: number,
  ) {
    super(`replica snapshot at WAL byte ${replayed}, the read needs ${required}`);
  }
}

/** The primary could not be asked for its position: nothing may be answered from a replica. */
export class ReplayTargetUnavailable extends Error {
  override name = "ReplayTargetUnavailable";
  constructor(readonly cause: unknown) {
    super(`the primary's WAL position could not be read: ${String(cause)}`);
  }
}

/** Throws {@link StaleSnapshot} unless a snapshot taken after replaying to `replayed` is fresh for `target`. */
export function confirmFresh(replayed: number | undefined, target: number): void {
  if (replayed === undefined || replayed < target) throw new StaleSnapshot(replayed ?? -1, target);
}

/**
 * The primary's position for reads asked for now. Reads share statements: a read joins the
 * statement about to be sent, never one already on its way (it may have been answered from before
 * the read's caller saw its commit acknowledged), so under load one statement in flight serves
 * every read that arrived meanwhile.
 */
export class ReplayTargets {
  /** The statement on its way. */
  private running?: Promise<number>;
  /** The statement to send once the running one is answered: for the reads that arrived meanwhile. */
  private next?: Promise<number>;

  /** `readPosition` runs {@link REPLAY_TARGET_SQL} on the primary, outside any transaction. */
  constructor(private readonly readPosition: () => Promise<number>) {}

  /** The target of a read asked for now: the primary's position, read by a statement sent after this call. */
  target(): Promise<number> {
    if (!this.running) return (this.running = this.send());
    if (!this.next) {
      const after = this.running.then(
        () => undefined,
        () => undefined,
      );
      this.next = after.then(() => {
        this.next = undefined;
        return (this.running = this.send());
      });
      // A replay target nobody awaits any more must not become an unhandled rejection.
      this.next.catch(() => {});
    }
    return this.next;
  }

  private send(): Promise<number> {
    const sent = this.readPosition().then(
      (position) => {
        if (this.running === sent) this.running = undefined;
        return position;
      },
      (error) => {
        if (this.running === sent) this.running = undefined;
        throw new ReplayTargetUnavailable(error);
      },
    );
    sent.catch(() => {});
    return sent;
  }
}
