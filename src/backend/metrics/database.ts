/**
 * The database: the storage engine's pool, commit lag and commit channel (read from the engines
 * when scraped), transaction retries, statement timeouts and, with `DATABASE_DURABILITY=standby`,
 * how writes were acknowledged. Read replicas have their own file (replicas.ts).
 */
import { Counter, Gauge } from "prom-client";
import { addTo, metricsRegistry, sum } from "./registry.ts";

/** What a storage engine reports (each part where the engine has it). */
export interface EngineSource {
  /** Pooled database connections: handed out, and requests waiting for one. */
  poolUsage?(): { inUse: number; waiting: number };
  /** Commits in the shared commit log this instance has not applied yet (log head − applied). */
  commitLag?(): Promise<number | undefined>;
  /** How other instances' commits reach this one. */
  commitChannel?(): string;
}

const engineSources = new Set<EngineSource>();

/** Reports a storage engine's pool, commit lag and commit channel; returns the removal. */
export function watchEngine(source: EngineSource): () => void {
  return addTo(engineSources, source);
}

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
