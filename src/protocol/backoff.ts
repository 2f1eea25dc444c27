/**
 * The one exponential backoff: every retry and poll that waits longer after each failure takes its
 * wait from {@link backoffDelayMs} and a named {@link BackoffPolicy} (the platform's are in
 * `src/backend/retry/policies.ts`, the browser client's next to their options). Here, not in the
 * platform, because the browser client uses it too and this folder imports nothing.
 */

/**
 * How a wait is spread below its ceiling, so that many waiters retrying at once do not meet again:
 * `none` waits the ceiling, `equal` a random time between half the ceiling and all of it, `full` a
 * random time between zero and the ceiling.
 *
 * @example
 * ```ts
 * import type { BackoffJitter } from "service-auth/server";
 *
 * const jitter: BackoffJitter = "equal"; // 500–1000 ms under a 1000 ms ceiling
 * ```
 */
export type BackoffJitter = "none" | "equal" | "full";

/**
 * A backoff policy: the ceiling of retry `attempt` (0 for the first) is `firstMs · 2^attempt`, at
 * most `maxMs`; `jitter` spreads the wait below it.
 *
 * @example
 * ```ts
 * import type { BackoffPolicy } from "service-auth/server";
 *
 * // 1 s, 2 s, 4 s … at most 1 minute, each between half and all of that.
 * const webhookRetry: BackoffPolicy = { firstMs: 1000, maxMs: 60_000, jitter: "equal" };
 * ```
 */
export interface BackoffPolicy {
  /** The first wait's ceiling, ms. */
  readonly firstMs: number;
  /** The largest ceiling, ms. */
  readonly maxMs: number;
  /** How the wait is spread below its ceiling. */
  readonly jitter: BackoffJitter;
}

/** Past this many doublings every policy is at its cap (and `2 ** attempt` stays finite). */
const MAX_DOUBLINGS = 52;

/**
 * The wait before retry `attempt` (0-based: failures in a row before this one) under `policy`, ms.
 * `random` (default `Math.random`, in [0, 1)) draws the jitter.
 *
 * @example
 * ```ts
 * import { backoffDelayMs } from "service-auth/server";
 *
 * const policy = { firstMs: 100, maxMs: 5000, jitter: "none" } as const;
 * backoffDelayMs(policy, 0); // 100
 * backoffDelayMs(policy, 3); // 800
 * backoffDelayMs(policy, 9); // 5000: the cap
 * ```
 */
export function backoffDelayMs(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const doublings = Math.min(MAX_DOUBLINGS, Math.max(0, Math.floor(attempt)));
  const ceiling = Math.min(policy.maxMs, policy.firstMs * 2 ** doublings);
  switch (policy.jitter) {
    case "none":
      return ceiling;
    case "equal":
      return ceiling * (0.5 + random() / 2);
    case "full":
      return ceiling * random();
  }
}
