/**
 * The rate-limit store contract on both Better Auth lines (docs/security.md, "The newest patched
 * Better Auth"): 1.4 reads a count (`get`), decides, and writes the count it computed (`set`); 1.7
 * hands the whole step to the store (`consume`). The platform's stores offer all three, so one
 * store object serves either line, and `consume` decides exactly as 1.4 does.
 */

/** One client's count on one endpoint, as Better Auth stores it. */
export interface RateLimitEntry {
  key: string;
  count: number;
  lastRequest: number;
}

/** A limit: at most `max` requests per `window` seconds. */
export interface RateLimitRule {
  window: number;
  max: number;
}

/** The answer to one request: refused ones carry the seconds until the window frees up. */
export interface RateLimitVerdict {
  allowed: boolean;
  retryAfter: number | null;
}

/** A rate-limit store as either Better Auth line calls it (`rateLimit.customStorage`). */
export interface RateLimitStore {
  get(key: string): Promise<RateLimitEntry | undefined>;
  set(key: string, value: RateLimitEntry): Promise<void>;
  consume(key: string, rule: RateLimitRule): Promise<RateLimitVerdict>;
}

/** The count and time of one client on one endpoint, without its key. */
export type RateLimitCount = Pick<RateLimitEntry, "count" | "lastRequest">;

/**
 * One request against `current` at `now` (ms) under `rule`: the count to write (none when the
 * request is refused) and the verdict. Better Auth 1.4's own step: a window counts from the last
 * request, and a request after a whole quiet window starts the count again.
 */
export function consumeStep(
  current: RateLimitCount | undefined,
  rule: RateLimitRule,
  now: number,
): { next?: RateLimitCount; verdict: RateLimitVerdict } {
  const windowMs = rule.window * 1000;
  if (current === undefined || now - current.lastRequest >= windowMs) {
    return { next: { count: 1, lastRequest: now }, verdict: { allowed: true, retryAfter: null } };
  }
  if (current.count >= rule.max) {
    const retryAfter = Math.ceil((current.lastRequest + windowMs - now) / 1000);
    return { verdict: { allowed: false, retryAfter } };
  }
  return {
    next: { count: current.count + 1, lastRequest: now },
    verdict: { allowed: true, retryAfter: null },
  };
}
