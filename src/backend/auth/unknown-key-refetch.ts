/**
 * The one throttle for refetching keys because a token names a key id not known here: the
 * commits catch-up before an unknown key is refused (`key-catch-up.ts`) and a remote JWKS
 * endpoint's refetch (`jwks-source.ts`) both use it.
 *
 * A token's key id is not verified yet and anyone can make one up, so refetches are bounded: one
 * round at a time, rounds that counted begin at least `minIntervalMs` apart, and callers that wait
 * ({@link UnknownKeyRefetch.next}) share the next round: it begins after each of them arrived, once
 * the running one has ended and the interval has passed. Many tokens with random key ids thus cost
 * at most one refetch per interval, however many arrive.
 */

export interface UnknownKeyRefetchOptions<T> {
  /** One round: refetches, and calls {@link UnknownKeyRefetch.began} if it counts. Never rejects. */
  round: () => Promise<T>;
  /** Shortest time between the beginnings of two rounds that counted, ms. */
  minIntervalMs: number;
  /** The clock the interval is measured on, ms (default `performance.now`). */
  now?: () => number;
}

export class UnknownKeyRefetch<T> {
  /** The round that has begun and not ended. */
  private running: Promise<T> | undefined;
  /** The round callers wait for that has not begun yet. */
  private waitedFor: Promise<T> | undefined;
  private lastAt = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(private readonly options: UnknownKeyRefetchOptions<T>) {
    this.now = options.now ?? (() => performance.now());
  }

  /** A refetch that counts began now (a round's, or one made for another reason): the interval restarts. */
  began(): void {
    this.lastAt = this.now();
  }

  /** When the last refetch that counted began (`-Infinity`: none yet), on the option's clock. */
  get lastBeganAt(): number {
    return this.lastAt;
  }

  /** How long until a round may begin, ms (≤ 0: now). */
  waitMs(): number {
    return this.lastAt + this.options.minIntervalMs - this.now();
  }

  /** Resolves with the outcome of a round that begins after this call (shared by every caller waiting). */
  next(): Promise<T> {
    if (this.waitedFor) return this.waitedFor;
    const next = (this.running ?? Promise.resolve())
      .then(() => delay(this.waitMs()))
      .then(() => {
        this.waitedFor = undefined;
        const round = this.options.round();
        this.running = round;
        const ended = () => {
          if (this.running === round) this.running = undefined;
        };
        round.then(ended, ended);
        return round;
      });
    this.waitedFor = next;
    return next;
  }
}

function delay(ms: number): Promise<void> | undefined {
  if (!(ms > 0)) return undefined;
  return new Promise((resolve) => setTimeout(resolve, ms));
}
