/**
 * The scheduler: jobs running in this process and the shared queue (read from the runners when
 * scraped), and jobs finished by kind and outcome.
 */
import { Counter, Gauge } from "prom-client";
import { addTo, metricsRegistry, sum } from "./registry.ts";

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
