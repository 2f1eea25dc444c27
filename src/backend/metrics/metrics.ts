/**
 * The platform's Prometheus metrics (prom-client), one file per subject, all in one registry
 * (`registry.ts`) with a small interface the rest of the code calls. Importing this index loads
 * every subject, so a scrape shows each family even before the part that counts it ran.
 *
 * - `calls.ts`: function calls over HTTP and the WebSocket (latency, count, outcome);
 * - `auth.ts`: token checks and auth routes by outcome, the identity cache, key catch-ups;
 * - `live.ts`: WebSocket connections, subscriptions, re-runs per commit;
 * - `database.ts`: pool, commit lag and channel, transaction retries, statement timeouts, standby acks;
 * - `replicas.ts`: reads routed to read replicas;
 * - `scheduler.ts`: jobs running, pending, late, finished;
 * - `queues.ts`: queues of work waiting for a thread (`watchQueue`);
 * - `default-metrics.ts`: prom-client's process and Node.js metrics.
 *
 * The hot path (a function call, a token check) only finds its series in a map and adds to plain
 * numbers (plain-series.ts). Every label is bounded: function names are registered names or
 * "unknown", outcomes are codes of the error registry, auth reasons and the rest are fixed lists.
 * No user id, token or email.
 */
export type { AuthCheck, AuthRouteOutcome, TokenOutcome } from "./auth.ts";
export { authMetrics, countAuthOutcome, tokenOutcomeOf } from "./auth.ts";
export type { CallKind, CallTransport } from "./calls.ts";
export { observeCall, outcomeOf } from "./calls.ts";
export type { EngineSource, StandbyAckOutcome } from "./database.ts";
export { countStandbyAck, dbMetrics, watchEngine } from "./database.ts";
export { collectProcessMetrics } from "./default-metrics.ts";
export type { SyncSource } from "./live.ts";
export { observeReruns, watchSync } from "./live.ts";
export { watchQueue } from "./queues.ts";
export { metricsRegistry } from "./registry.ts";
export type { ReplicaReadOutcome } from "./replicas.ts";
export { replicaMetrics } from "./replicas.ts";
export type { SchedulerSource } from "./scheduler.ts";
export { schedulerMetrics, watchScheduler } from "./scheduler.ts";
