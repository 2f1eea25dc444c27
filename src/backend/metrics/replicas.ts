/** Read replicas (`DATABASE_READ_URLS`): where each read snapshot ran and why, and waits for replay. */
import { Counter, Histogram } from "prom-client";
import { metricsRegistry } from "./registry.ts";

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
    let series = replicaOutcomes.get(outcome);
    if (!series) replicaOutcomes.set(outcome, (series = replicaReads.labels({ outcome })));
    series.inc();
  },
  waited(seconds: number): void {
    replicaWait.observe(seconds);
  },
};
