/**
 * Before a token whose signing key is unknown here is refused: catching up with the commits of the
 * other instances sharing the database. Another instance may just have rotated the keys (a new
 * `JWKS`) and issued a token of the new key that reaches this instance before the commit that
 * stored the key does (the env follow-up); refusing it would be a 401 nobody should notice.
 *
 * Bounded by the unknown-key throttle (`unknown-key-refetch.ts`): one round at a time, callers
 * arriving during a round share the next one, and rounds that reached the database start at least
 * `minIntervalMs` apart (a caller waits for the next round rather than being refused). Where there
 * is nothing to catch up with (one process, or a SQLite cluster worker already at the log's head)
 * no round is counted and nobody waits.
 */
import { authMetrics } from "../metrics/metrics.ts";
import { UnknownKeyRefetch } from "./unknown-key-refetch.ts";

/** Shortest time between two catch-ups for unknown keys. */
export const KEY_CATCH_UP_INTERVAL_MS = 250;

/** What a round does, given by the authenticator. */
export interface CatchUpSteps {
  /**
   * Starts catching up with every commit made anywhere before now (the commits core's `confirm`);
   * undefined when there is nothing to catch up with.
   */
  catchUp(): Promise<unknown> | undefined;
  /** Resolves once what the commits caught up with started has been applied (the env reload). */
  settled(): Promise<void>;
}

export class KeyCatchUp {
  private readonly refetch: UnknownKeyRefetch<void>;

  constructor(
    private readonly steps: CatchUpSteps,
    minIntervalMs = KEY_CATCH_UP_INTERVAL_MS,
  ) {
    this.refetch = new UnknownKeyRefetch({ round: () => this.round(), minIntervalMs });
  }

  /** Resolves once a round that began after this call has ended (never rejects). */
  run(): Promise<void> {
    return this.refetch.next();
  }

  private round(): Promise<void> {
    let catchingUp: Promise<unknown> | undefined;
    try {
      catchingUp = this.steps.catchUp();
    } catch {
      catchingUp = undefined; // the log unreadable: as below, the key stays unknown
    }
    if (catchingUp) {
      this.refetch.began();
      authMetrics.keyCatchUp();
    }
    // Also with nothing to catch up with: an env reload started by a commit heard just before
    // may still be on its way. A failed catch-up (the database unreachable) leaves the key
    // unknown, and the token is refused.
    return Promise.resolve(catchingUp)
      .then(() => this.steps.settled())
      .then(noop, noop);
  }
}

const noop = () => {};
