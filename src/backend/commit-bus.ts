/**
 * The commit bus: numbers every commit this process learns of (its own, and other instances'
 * through the storage engine) and delivers it, first to the backend's own hearers in a fixed
 * order, then to the listeners (live subscriptions, tests).
 *
 * The hearers come first because listeners act on what a commit changed: the identity cache must
 * already have dropped a revoked session or banned user, or a listener re-running a query could be
 * served the old identity.
 */
import type { Commit, DocumentWrite } from "./db/read-write-sets.ts";
import { logger } from "./logger.ts";

export type CommitListener = (commit: Commit) => void;

export class CommitBus {
  private sequence = 0;
  private readonly listeners = new Set<CommitListener>();

  /**
   * @param hearers hear each commit in this order, before any listener; unlike listeners, a
   *   hearer that throws is not contained, as skipping an invalidation would be unsafe.
   */
  constructor(private readonly hearers: readonly CommitListener[]) {}

  /** The sequence number of the last published commit. */
  get lastSequence(): number {
    return this.sequence;
  }

  /** Calls `listener` after every commit, after the hearers; returns the unsubscribe. */
  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Delivers a commit here: one of this process (other instances learn of it from the storage
   * engine, which records it in the commit's own transaction), or one the engine reported.
   * `unknown`: another process committed and its write set is not known, so everyone must assume
   * anything changed.
   */
  publish(writes: DocumentWrite[], unknown = false): void {
    const commit: Commit = { sequence: ++this.sequence, writes, unknown };
    for (const hear of this.hearers) hear(commit);
    for (const l of this.listeners) {
      try {
        l(commit);
      } catch (e) {
        logger.error("commit listener failed", { error: String(e) });
      }
    }
  }
}
