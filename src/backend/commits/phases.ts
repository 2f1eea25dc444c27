/**
 * Delivery in named phases: each event reaches every listener of the first phase, then every
 * listener of the next, whatever order they were registered in. A phase says what its listeners
 * are for (e.g. "invalidate" before "notify"), so a reader checks the order against the phase
 * list, not against who happened to register first.
 */
import { logger } from "../logger.ts";

export interface PhaseOptions<P extends string> {
  /**
   * Phases whose failing listener is logged and skipped, so the others still hear the event. A
   * listener of any other phase that throws stops the delivery and the error reaches the sender:
   * skipping an invalidation would be unsafe.
   */
  contained?: readonly P[];
  /** What a contained failure is logged as. */
  failureMessage?: string;
}

export class Phases<P extends string, E> {
  private readonly listeners: Set<(event: E) => void>[];
  private readonly contained: boolean[];

  /** @param order the phases, first to last. */
  constructor(
    readonly order: readonly P[],
    private readonly options: PhaseOptions<P> = {},
  ) {
    this.listeners = order.map(() => new Set());
    this.contained = order.map((phase) => options.contained?.includes(phase) ?? false);
  }

  /** Calls `listener` for every event, in `phase`; returns the unsubscribe. */
  on(phase: P, listener: (event: E) => void): () => void {
    const index = this.order.indexOf(phase);
    if (index < 0) throw new Error(`unknown phase "${phase}"`);
    const set = this.listeners[index];
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Delivers `event` to every listener, phase by phase. */
  deliver(event: E): void {
    for (let i = 0; i < this.listeners.length; i++) {
      if (!this.contained[i]) {
        for (const listener of this.listeners[i]) listener(event);
        continue;
      }
      for (const listener of this.listeners[i]) {
        try {
          listener(event);
        } catch (e) {
          logger.error(this.options.failureMessage ?? "listener failed", {
            phase: this.order[i],
            error: String(e),
          });
        }
      }
    }
  }
}
