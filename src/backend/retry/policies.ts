/**
 * Every backoff the platform uses, by name, in one list: what waits longer after each failure and
 * how (first wait, cap, jitter). The waits come from `backoffDelayMs` (src/protocol/backoff.ts);
 * a policy an option can tune is the default, spread with the option's value where it is used.
 */
import type { BackoffPolicy } from "../../protocol/backoff.ts";

export const RETRY_POLICIES = {
  /**
   * Reconnecting the commit channel's LISTEN connection (postgres/notify.ts); the cap is its
   * `maxReconnectDelayMs`. Jittered: every instance lost it at once when the server restarted.
   */
  notifyReconnect: { firstMs: 50, maxMs: 2000, jitter: "equal" },
  /**
   * The waits between a resting read replica's recovery probes (its outage breaker's `recovery`,
   * postgres/replica.ts): whole multiples of the first.
   */
  replicaRest: { firstMs: 250, maxMs: 10_000, jitter: "none" },
  /**
   * Polling the standbys' flush position while a commit waits (postgres/standby-ack.ts); back to
   * the first wait after a round confirmed a commit.
   */
  standbyAckPoll: { firstMs: 1, maxMs: 20, jitter: "none" },
  /**
   * A serialization conflict's retry (postgres/transaction-loop.ts): fully jittered so the
   * conflicting transactions stop meeting each other.
   */
  transactionConflict: { firstMs: 2, maxMs: 100, jitter: "full" },
  /**
   * Waiting for another process's SQLite write lock (sqlite/write-lock.ts): short first waits,
   * and polling stays cheap during a long lock.
   */
  writeLockWait: { firstMs: 1, maxMs: 50, jitter: "equal" },
  /**
   * The outage breaker's recovery probe deadline (outage-breaker.ts), longer after each probe that
   * waited; its first and cap are the `probeTimeoutMs` and `maxProbeTimeoutMs` options.
   */
  outageProbeTimeout: { firstMs: 1500, maxMs: 15_000, jitter: "none" },
  /** A live query that failed transiently (database unavailable) runs again (sync/query-group.ts). */
  liveQueryRetry: { firstMs: 250, maxMs: 4000, jitter: "none" },
} as const satisfies Record<string, BackoffPolicy>;
