/**
 * Delivery in named phases to named consumers: each event reaches the consumers in the order a
 * declaration lists them (phase by phase, and within a phase in the order written there), whatever
 * order they attached in. A reader checks who hears what first against the declaration (e.g.
 * commits/consumers.ts), not against which constructor happened to run first.
 */
import { logger } from "../logger.ts";

/** One phase: its name and its consumers, in the order they hear each event. */
export interface PhaseDeclaration {
  readonly phase: string;
  readonly consumers: readonly string[];
}

/** The phase names of a declaration. */
export type PhaseOf<D extends readonly PhaseDeclaration[]> = D[number]["phase"];
/** The consumer names of a declaration. */
export type ConsumerOf<D extends readonly PhaseDeclaration[]> = D[number]["consumers"][number];

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

/** One consumer's place in the order, and its listeners (several when, e.g., tests attach more). */
interface Slot<E> {
  readonly phase: string;
  readonly consumer: string;
  readonly contained: boolean;
  readonly listeners: Set<(event: E) => void>;
}

/** A consumer's place in the delivery order and how many listeners it has attached now. */
export interface AttachedConsumer {
  phase: string;
  consumer: string;
  listeners: number;
}

export class Phases<D extends readonly PhaseDeclaration[], E> {
  /** Every consumer of every phase, in delivery order. */
  private readonly slots: Slot<E>[] = [];
  private readonly byConsumer = new Map<string, Slot<E>>();

  /** @param declared the phases, first to last, each with its consumers in order. */
  constructor(
    readonly declared: D,
    private readonly options: PhaseOptions<PhaseOf<D>> = {},
  ) {
    for (const { phase, consumers } of declared) {
      const contained = options.contained?.includes(phase) ?? false;
      for (const consumer of consumers) {
        if (this.byConsumer.has(consumer)) throw new Error(`consumer "${consumer}" declared twice`);
        const slot: Slot<E> = { phase, consumer, contained, listeners: new Set() };
        this.slots.push(slot);
        this.byConsumer.set(consumer, slot);
      }
    }
  }

  /** Calls `listener` for every event, at `consumer`'s place in the order; returns the unsubscribe. */
  on(consumer: ConsumerOf<D>, listener: (event: E) => void): () => void {
    const slot = this.byConsumer.get(consumer);
    if (!slot) throw new Error(`unknown consumer "${consumer}"`);
    slot.listeners.add(listener);
    return () => slot.listeners.delete(listener);
  }

  /** The consumers in delivery order, with how many listeners each has now. */
  attached(): AttachedConsumer[] {
    return this.slots.map(({ phase, consumer, listeners }) => ({
      phase,
      consumer,
      listeners: listeners.size,
    }));
  }

  /** Delivers `event` to every listener, consumer by consumer in the declared order. */
  deliver(event: E): void {
    for (const slot of this.slots) {
      if (slot.listeners.size === 0) continue;
      if (!slot.contained) {
        for (const listener of slot.listeners) listener(event);
        continue;
      }
      for (const listener of slot.listeners) {
        try {
          listener(event);
        } catch (e) {
          logger.error(this.options.failureMessage ?? "listener failed", {
            phase: slot.phase,
            consumer: slot.consumer,
            error: String(e),
          });
        }
      }
    }
  }
}
