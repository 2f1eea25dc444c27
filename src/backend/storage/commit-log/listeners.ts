/**
 * The external-commit listeners of one engine: every commit another process or instance made is
 * handed to each of them, a listener that throws is logged without keeping the commit from the
 * others, and a commit that arrives before anyone listens is not lost: the first listener gets an
 * unknown commit ("re-check everything"). Shared by the commit log follower (commit-log/follower.ts)
 * and the SQLite engine's cross-process wiring (sqlite/cross-process.ts), so both deliver alike.
 */
import { logger } from "../../logger.ts";

/** A commit's encoded write set, or undefined when unknown. */
export type ExternalCommitListener = (payload?: string) => void;

export class CommitListeners {
  private readonly listeners = new Set<ExternalCommitListener>();
  /** A commit arrived with nobody listening: the first listener gets an unknown commit. */
  private missed = false;

  /** How many listeners there are. */
  get size(): number {
    return this.listeners.size;
  }

  /** Adds `listener`; returns the unsubscribe. */
  add(listener: ExternalCommitListener): () => void {
    this.listeners.add(listener);
    if (this.missed) {
      this.missed = false;
      queueMicrotask(() => this.emit(undefined));
    }
    return () => this.listeners.delete(listener);
  }

  /** Hands a commit (its write set, or undefined: unknown) to every listener. */
  emit(payload: string | undefined): void {
    if (this.listeners.size === 0) {
      this.missed = true;
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener(payload);
      } catch (error) {
        logger.error("external commit listener failed", { error: String(error) });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
