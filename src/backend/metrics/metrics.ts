/**
 * The platform's Prometheus metrics (prom-client), in one registry with a small interface the rest
 * of the code calls. The hot path (a function call, a token check) only finds its series (created
 * once per label set) in a map and adds to plain numbers: no label object, no string built per
 * request (plain-series.ts). Numbers that
 * exist anyway (live sockets, pool sizes, commit lag) are read when scraped, through sources the
 * running parts register.
 *
 * Every label is bounded: function names are registered names or "unknown", outcomes are codes of
 * the error registry, auth reasons and the rest are fixed lists. No user id, token or email.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { AppError } from "../errors.ts";
import { type CounterSeries, type HistogramSeries, PlainCounter, PlainHistogram } from "./plain-series.ts";

/** The registry `/metrics` shows (the platform's own; prom-client's global one stays the app's). */
export const metricsRegistry = new Registry();

/** How a function call arrived. */
export type CallTransport = "http" | "ws";
/** What a call ran. */
export type CallKind = "query" | "mutation" | "action";

/**
 * Why a token check (HTTP, WebSocket, actions) ended as it did: `ok`, a step 1 refusal
 * (`signature_invalid`, `unknown_key`, `token_expired`, `token_malformed`, `token_claims` for
 * issuer/audience/algorithm/time claims, `no_keys` when no key set could be read), a step 2 refusal
 * (`session_missing`, `session_expired`, `user_missing`, `banned`, `unauthorized` for any other),
 * `unavailable` (database outage) or `error`.
 */
export type TokenOutcome =
  | "ok"
  | "signature_invalid"
  | "unknown_key"
  | "token_expired"
  | "token_malformed"
  | "token_claims"
  | "no_keys"
  | "session_missing"
  | "session_expired"
  | "user_missing"
  | "banned"
  | "unauthorized"
  | "unavailable"
  | "error";

/**
 * Outcomes the auth integration reports from its own routes: a sign-in `ok`, refused for wrong
 * credentials (`invalid_credentials`), for a ban (`banned`), by the rate limiter (`rate_limited`,
 * any auth route), or `error` (anything else).
 *
 * @example
 * ```ts
 * import { type AuthRouteOutcome, countAuthOutcome } from "service-auth/server";
 *
 * const outcome: AuthRouteOutcome = response.status === 429 ? "rate_limited" : response.ok ? "ok" : "error";
 * countAuthOutcome("auth_route", outcome);
 * ```
 */
export type AuthRouteOutcome = "ok" | "invalid_credentials" | "banned" | "rate_limited" | "error";

/** Where an auth outcome was decided. */
export type AuthCheck = "token" | "sign_in" | "auth_route";

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

// The per-request metrics count in plain numbers (plain-series.ts); the rest are prom-client's.
const callDuration = new PlainHistogram(
  "service_auth_function_call_duration_seconds",
  "Function calls over HTTP (POST /api/query|mutation|action) and the WebSocket, by transport, kind, function and outcome (ok or the error code); _count counts the calls",
  LATENCY_BUCKETS,
  metricsRegistry,
);

const authOutcomes = new PlainCounter(
  "service_auth_auth_outcomes_total",
  "Authentication outcomes: token checks (steps 1+2) and the auth routes' sign-ins and rate limits, by reason",
  metricsRegistry,
);

const identityCache = new PlainCounter(
  "service_auth_identity_cache_total",
  "Identity cache lookups of token checks, by result (hit: steps 1+2 skipped)",
  metricsRegistry,
);

const keyCatchUps = new Counter({
  name: "service_auth_key_catch_ups_total",
  help: "Catch-ups with other instances' commits for tokens whose signing key was unknown here (a key rotated elsewhere); at most one per interval",
  registers: [metricsRegistry],
});

const rerunsPerCommit = new Histogram({
  name: "service_auth_reruns_per_commit",
  help: "Live queries (and identity checks) a commit made run again",
  buckets: [0, 1, 2, 5, 10, 25, 50, 100, 250, 1000],
  registers: [metricsRegistry],
});

const transactionRetries = new Counter({
  name: "service_auth_db_transaction_retries_total",
  help: "Database transactions run again, by reason (conflict: serialization failure or deadlock; reconnect: a dead pooled connection)",
  labelNames: ["reason"] as const,
  registers: [metricsRegistry],
});

const statementTimeouts = new Counter({
  name: "service_auth_db_statement_timeouts_total",
  help: "Database statements cancelled by statement_timeout",
  registers: [metricsRegistry],
});

// ------------------------------------------------------------------------ sources read when scraped

/** What a running live-sync endpoint reports. */
export interface SyncSource {
  sockets(): number;
  subscriptions(): number;
}

/** What a storage engine reports (each part where the engine has it). */
export interface EngineSource {
  /** Pooled database connections: handed out, and requests waiting for one. */
  poolUsage?(): { inUse: number; waiting: number };
  /** Commits in the shared commit log this instance has not applied yet (log head − applied). */
  commitLag?(): Promise<number | undefined>;
  /** How other instances' commits reach this one. */
  commitChannel?(): string;
}

const syncSources = new Set<SyncSource>();
const engineSources = new Set<EngineSource>();
const queueSources = new Map<string, () => number>();

/** Adds `source` to every scrape until the returned function is called. */
function addTo<T>(set: Set<T>, source: T): () => void {
  set.add(source);
  return () => set.delete(source);
}

/** Reports a live-sync endpoint's sockets and subscriptions; returns the removal. */
export function watchSync(source: SyncSource): () => void {
  return addTo(syncSources, source);
}

/** Reports a storage engine's pool, commit lag and commit channel; returns the removal. */
export function watchEngine(source: EngineSource): () => void {
  return addTo(engineSources, source);
}

function sum<T>(set: Set<T>, read: (source: T) => number | undefined): number {
  let total = 0;
  for (const source of set) total += read(source) ?? 0;
  return total;
}

new Gauge({
  name: "service_auth_websocket_connections",
  help: "Open WebSocket connections",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(syncSources, (s) => s.sockets()));
  },
});

new Gauge({
  name: "service_auth_subscriptions",
  help: "Live query subscriptions of the open WebSocket connections",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(syncSources, (s) => s.subscriptions()));
  },
});

new Gauge({
  name: "service_auth_db_pool_connections_in_use",
  help: "Pooled database connections handed out (PostgreSQL)",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(engineSources, (s) => s.poolUsage?.().inUse));
  },
});

new Gauge({
  name: "service_auth_db_pool_waiting",
  help: "Requests waiting for a pooled database connection (PostgreSQL)",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(engineSources, (s) => s.poolUsage?.().waiting));
  },
});

new Gauge({
  name: "service_auth_commit_lag",
  help: "Commits in the shared commit log not yet applied by this instance (log head minus applied; PostgreSQL and SQLite cluster mode); in a cluster scrape, the largest of the workers'",
  registers: [metricsRegistry],
  aggregator: "max",
  async collect() {
    let lag = 0;
    for (const source of engineSources) {
      // A database that cannot answer now leaves the lag unknown: it is not reported as 0.
      const value = await source.commitLag?.().catch(() => undefined);
      if (value === undefined && source.commitLag) {
        this.reset();
        return;
      }
      lag = Math.max(lag, value ?? 0);
    }
    this.set(lag);
  },
});

/** The commit channel modes; the gauge shows 1 for the current one (a cluster scrape: how many workers). */
const COMMIT_CHANNELS = ["listening", "reconnecting", "polling"] as const;

new Gauge({
  name: "service_auth_commit_channel",
  help: "How other instances' commits reach this one (PostgreSQL): 1 for the current mode (listening: NOTIFY; reconnecting; polling)",
  labelNames: ["mode"] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const source of engineSources) {
      const mode = source.commitChannel?.();
      if (mode !== undefined)
        this.inc({ mode: (COMMIT_CHANNELS as readonly string[]).includes(mode) ? mode : "other" });
    }
  },
});

new Gauge({
  name: "service_auth_queue_length",
  help: "Work waiting for its turn, by queue (scrypt: password hashes waiting for a thread)",
  labelNames: ["queue"] as const,
  registers: [metricsRegistry],
  collect() {
    for (const [queue, length] of queueSources) this.set({ queue }, length());
  },
});

// ------------------------------------------------------------------------ scheduler

/** What a process's scheduler runner reports (scheduler/runner.ts). */
export interface SchedulerSource {
  /** Jobs running in this process now. */
  running(): number;
  /** The shared queue: pending jobs (capped) and how late the oldest due one is, in ms. */
  queue(): Promise<{ pending: number; lagMs: number }>;
}

const schedulerSources = new Set<SchedulerSource>();

/** Reports a scheduler runner on every scrape until the returned function is called. */
export function watchScheduler(source: SchedulerSource): () => void {
  return addTo(schedulerSources, source);
}

new Gauge({
  name: "service_auth_scheduler_jobs_running",
  help: "Scheduled jobs running in this process",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(schedulerSources, (s) => s.running()));
  },
});

/** The queue as one runner sees it (the same database for all): reported once, not summed. */
async function queueView(): Promise<{ pending: number; lagMs: number } | undefined> {
  for (const source of schedulerSources) return source.queue().catch(() => undefined);
  return undefined;
}

new Gauge({
  name: "service_auth_scheduler_jobs_pending",
  help: "Scheduled jobs waiting in the shared queue, due or not (counted up to 10,000); in a cluster scrape, the largest of the workers'",
  registers: [metricsRegistry],
  aggregator: "max",
  async collect() {
    const view = await queueView();
    if (view) this.set(view.pending);
    else this.reset();
  },
});

new Gauge({
  name: "service_auth_scheduler_lag_seconds",
  help: "How late the oldest due, unstarted job is (0 when none is due); in a cluster scrape, the largest of the workers'",
  registers: [metricsRegistry],
  aggregator: "max",
  async collect() {
    const view = await queueView();
    if (view) this.set(view.lagMs / 1000);
    else this.reset();
  },
});

const jobRuns = new Counter({
  name: "service_auth_scheduler_job_runs_total",
  help: "Scheduled jobs finished by this process, by kind and outcome (done, failed)",
  labelNames: ["kind", "outcome"] as const,
  registers: [metricsRegistry],
});

/** Scheduler counters the runner increments. */
export const schedulerMetrics = {
  finished(kind: "mutation" | "action", outcome: "done" | "failed"): void {
    jobRuns.labels({ kind, outcome }).inc();
  },
};

// ------------------------------------------------------------------------ hot path

type CallChild = HistogramSeries;
/** Map keys per transport and kind, as constants: no string is built per call. */
const SERIES_KEYS = {
  http: { query: "query", mutation: "mutation", action: "action" },
  ws: { query: "ws:query", mutation: "ws:mutation", action: "ws:action" },
} as const;
/** transport → kind → function → outcome → pre-bound child. Bounded by registered functions × codes. */
const callChildren = new Map<string, Map<string, Map<string, CallChild>>>();

function callChild(transport: CallTransport, kind: CallKind, fn: string, outcome: string): CallChild {
  const key = SERIES_KEYS[transport][kind];
  let byFunction = callChildren.get(key);
  if (!byFunction) callChildren.set(key, (byFunction = new Map()));
  let byOutcome = byFunction.get(fn);
  if (!byOutcome) byFunction.set(fn, (byOutcome = new Map()));
  let child = byOutcome.get(outcome);
  if (!child) {
    byOutcome.set(outcome, (child = callDuration.series({ transport, kind, function: fn, outcome })));
  }
  return child;
}

/**
 * Records one function call. `fn` must be a registered function's path or "unknown" (callers check
 * with `Backend.hasFunction`); `startedAt` is `performance.now()` when the call arrived.
 */
export function observeCall(
  transport: CallTransport,
  kind: CallKind,
  fn: string,
  outcome: string,
  startedAt: number,
): void {
  callChild(transport, kind, fn, outcome).observe((performance.now() - startedAt) / 1000);
}

/** The outcome label of a call that threw: its error code (bounded by the registry) or INTERNAL. */
export function outcomeOf(error: unknown): string {
  return error instanceof AppError ? error.code : "INTERNAL";
}

const authChildren = new Map<string, CounterSeries>();

/**
 * Counts one auth outcome (see {@link TokenOutcome} and {@link AuthRouteOutcome}).
 *
 * @example
 * ```ts
 * import { countAuthOutcome } from "service-auth/server";
 *
 * // Counted in service_auth_auth_outcomes_total{check="sign_in",outcome="invalid_credentials"}.
 * countAuthOutcome("sign_in", "invalid_credentials");
 * ```
 */
export function countAuthOutcome(check: "token", outcome: TokenOutcome): void;
export function countAuthOutcome(check: "sign_in" | "auth_route", outcome: AuthRouteOutcome): void;
export function countAuthOutcome(check: AuthCheck, outcome: TokenOutcome | AuthRouteOutcome): void {
  const key = `${check}:${outcome}`;
  let child = authChildren.get(key);
  if (!child) authChildren.set(key, (child = authOutcomes.series({ check, outcome })));
  child.inc();
}

const tokenOk = authOutcomes.series({ check: "token", outcome: "ok" });
authChildren.set("token:ok", tokenOk);
const cacheHit = identityCache.series({ result: "hit" });
const cacheMiss = identityCache.series({ result: "miss" });

/** Hot-path counters of the authenticator, pre-bound. */
export const authMetrics = {
  tokenAccepted(): void {
    tokenOk.inc();
  },
  cacheHit(): void {
    cacheHit.inc();
  },
  cacheMiss(): void {
    cacheMiss.inc();
  },
  keyCatchUp(): void {
    keyCatchUps.inc();
  },
};

/** Step 1 refusal codes (`TokenErrorCode`) → outcome. */
const TOKEN_REASONS: Record<string, TokenOutcome> = {
  INVALID_SIGNATURE: "signature_invalid",
  UNKNOWN_KEY: "unknown_key",
  TOKEN_EXPIRED: "token_expired",
  TOKEN_MALFORMED: "token_malformed",
  TOKEN_TOO_LARGE: "token_malformed",
  ALG_NOT_ALLOWED: "token_claims",
  CLAIM_INVALID: "token_claims",
  NO_KEYS: "no_keys",
};

/** Step 2 refusal reasons an identity resolver names in `data.reason` → outcome. */
const RESOLVER_REASONS: Record<string, TokenOutcome> = {
  SESSION_MISSING: "session_missing",
  SESSION_EXPIRED: "session_expired",
  USER_MISSING: "user_missing",
};

/** Why a token check failed, from what it threw. */
export function tokenOutcomeOf(error: unknown): TokenOutcome {
  if (!(error instanceof AppError)) return "error";
  if (error.code === "ACCOUNT_BANNED") return "banned";
  if (error.code === "DATABASE_UNAVAILABLE" || error.code === "DATABASE_BUSY") return "unavailable";
  if (error.code !== "UNAUTHORIZED") return "error";
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  if (typeof reason !== "string") return "unauthorized";
  return TOKEN_REASONS[reason] ?? RESOLVER_REASONS[reason] ?? "unauthorized";
}

/** Re-runs a commit caused (the reactor). */
export function observeReruns(count: number): void {
  rerunsPerCommit.observe(count);
}

const conflictRetry = transactionRetries.labels({ reason: "conflict" });
const reconnectRetry = transactionRetries.labels({ reason: "reconnect" });

/** Database counters the engines increment. */
export const dbMetrics = {
  retried(reason: "conflict" | "reconnect"): void {
    (reason === "conflict" ? conflictRetry : reconnectRetry).inc();
  },
  statementTimedOut(): void {
    statementTimeouts.inc();
  },
};

/** How a write's acknowledgement went with `DATABASE_DURABILITY=standby` (postgres/standby-ack.ts). */
export type StandbyAckOutcome = "flushed" | "waited" | "unconfirmed";

const standbyAcks = new Counter({
  name: "service_auth_db_standby_acks_total",
  help: "Committed writes with DATABASE_DURABILITY=standby, by outcome: flushed (a standby had flushed the commit when COMMIT returned), waited (acknowledged after waiting for one), unconfirmed (none did in time: answered 503)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

/** Counts a write's acknowledgement with `DATABASE_DURABILITY=standby`. */
export function countStandbyAck(outcome: StandbyAckOutcome): void {
  standbyAcks.labels({ outcome }).inc();
}

/** Where a read ran when read replicas are configured, and why (see {@link replicaMetrics}). */
export type ReplicaReadOutcome =
  | "replica_fresh"
  | "replica_waited"
  | "primary_stale"
  | "primary_lagging"
  | "primary_unavailable"
  | "primary_none_ready";

const replicaReads = new Counter({
  name: "service_auth_db_replica_reads_total",
  help: "Read snapshots of an instance with read replicas (DATABASE_READ_URLS), by outcome: replica_fresh (the replica had replayed the primary's commit log head read at the read's start), replica_waited (after waiting for it), primary_stale (not within DATABASE_READ_WAIT_MS), primary_lagging (every replica behind a read it could not wait for), primary_unavailable (the replica failed), primary_none_ready (no replica checked and ready)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

const replicaWait = new Histogram({
  name: "service_auth_db_replica_wait_seconds",
  help: "Time reads spent waiting for a replica to replay the primary's position (served by the replica or not)",
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  registers: [metricsRegistry],
});

const replicaOutcomes = new Map<ReplicaReadOutcome, { inc(): void }>();

/** Counters of reads routed to read replicas (storage/postgres/read-replicas.ts). */
export const replicaMetrics = {
  read(outcome: ReplicaReadOutcome): void {
    let child = replicaOutcomes.get(outcome);
    if (!child) replicaOutcomes.set(outcome, (child = replicaReads.labels({ outcome })));
    child.inc();
  },
  waited(seconds: number): void {
    replicaWait.observe(seconds);
  },
};

/**
 * Reports the length of a queue (e.g. `scrypt`, the password hashes waiting for a thread) on every
 * scrape; the last registration of a name wins.
 *
 * @example
 * ```ts
 * import { watchQueue } from "service-auth/server";
 *
 * const waiting: unknown[] = [];
 * // Each scrape of /metrics reports the current length of the password-hash queue.
 * watchQueue("scrypt", () => waiting.length);
 * ```
 */
export function watchQueue(queue: "scrypt", length: () => number): void {
  queueSources.set(queue, length);
}

let defaultsCollected = false;

/**
 * prom-client's default metrics (process CPU and memory, event-loop delay, heap, handles) in the
 * platform's registry; once per process, when metrics are first served.
 */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry });
}
