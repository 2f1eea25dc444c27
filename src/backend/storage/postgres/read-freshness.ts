/**
 * Freshness of a read on a streaming standby, in commit log numbers (`commit-log/log.ts`).
 *
 * The promise a replica read keeps is the primary's: it sees every commit acknowledged before the
 * read was asked for (a revocation, a ban, the caller's own mutation). A {@link FreshnessStamps}
 * stamp is the head of the log on the primary, read by a statement sent after the read was asked
 * for, so it is at least the number of every such commit. A replica snapshot is fresh when the
 * head it sees (read inside the snapshot by `READ_BEGIN`) is at least the stamp: the log orders
 * commits as the WAL does (a number is drawn under a lock held until the commit record is
 * written), a standby applies commit records in WAL order, so a snapshot that sees number N sees
 * every commit numbered below N.
 *
 * Commits that change no document write no log row; they cannot make a read stale. DDL writes no
 * row either: a replica is used only once it replayed this instance's migration
 * (`read-replicas.ts`).
 *
 * This is the one place that decides what "fresh" means for a replica; the rest only asks.
 */
import { COMMIT_LOG_TABLE } from "../commit-log/log.ts";
import { quote } from "../sql/names.ts";

/** The newest commit number, read in a statement of its own (0 for an empty log). */
export const LOG_HEAD_SQL = `SELECT seq FROM ${quote(COMMIT_LOG_TABLE)} ORDER BY seq DESC LIMIT 1`;

/** The head {@link LOG_HEAD_SQL} answered. */
export function headOf(rows: readonly { seq?: unknown }[]): number {
  return rows.length ? Number(rows[0].seq) : 0;
}

/** A replica snapshot older than the read's stamp: the read must wait for the replica, or go to the primary. */
export class StaleSnapshot extends Error {
  override name = "StaleSnapshot";
  constructor(
    /** The newest commit number the snapshot sees. */
    readonly head: number,
    /** The stamp: the primary's head when the read was asked for. */
    readonly required: number,
  ) {
    super(`replica snapshot at commit ${head}, the read needs ${required}`);
  }
}

/** The primary could not be asked for its head: nothing may be answered from a replica. */
export class StampUnavailable extends Error {
  override name = "StampUnavailable";
  constructor(readonly cause: unknown) {
    super(`the primary's commit log head could not be read: ${String(cause)}`);
  }
}

/** Throws {@link StaleSnapshot} unless a snapshot seeing `head` is fresh for `stamp`. */
export function confirmFresh(head: number | undefined, stamp: number): void {
  if (head === undefined || head < stamp) throw new StaleSnapshot(head ?? -1, stamp);
}

/**
 * The primary's head for reads asked for now. Reads share statements: a read joins the statement
 * about to be sent, never one already on its way (it may have been answered from before the
 * read's caller saw its commit acknowledged), so under load one statement in flight serves every
 * read that arrived meanwhile.
 */
export class FreshnessStamps {
  /** The statement on its way. */
  private running?: Promise<number>;
  /** The statement to send once the running one is answered: for the reads that arrived meanwhile. */
  private next?: Promise<number>;

  /** `readHead` runs {@link LOG_HEAD_SQL} on the primary, outside any transaction. */
  constructor(private readonly readHead: () => Promise<number>) {}

  /** The stamp of a read asked for now: the primary's head, read by a statement sent after this call. */
  stamp(): Promise<number> {
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
      // A stamp nobody awaits any more must not become an unhandled rejection.
      this.next.catch(() => {});
    }
    return this.next;
  }

  private send(): Promise<number> {
    const sent = this.readHead().then(
      (head) => {
        if (this.running === sent) this.running = undefined;
        return head;
      },
      (error) => {
        if (this.running === sent) this.running = undefined;
        throw new StampUnavailable(error);
      },
    );
    sent.catch(() => {});
    return sent;
  }
}
