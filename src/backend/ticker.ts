/**
 * The engine's periodic work, one mechanism: every task the platform runs on a period is named in
 * {@link TickerTask} and runs through {@link tick}, which times each run into
 * `service_auth_periodic_task_duration_seconds{task}` (its `_count` counts the runs). App-level
 * periodic work is a scheduler cron instead (`cronJobs()`), which runs once across instances; these
 * run in every process, on its own state. Presence stays here: its rows and heartbeat are this
 * instance's, and a process may serve without a scheduler (`scheduler: false`).
 *
 * Timers never keep the process alive (`unref`). A run is not skipped while the previous one is
 * still settling: tasks that must not overlap guard themselves, as they did before.
 */
import { logger } from "./logger.ts";
import { metricsRegistry } from "./metrics/metrics.ts";
import { type HistogramSeries, PlainHistogram } from "./metrics/plain-series.ts";

/** Every periodic task of the engine, by the name its metric and logs carry. */
export type TickerTask =
  /** sync/server.ts: WebSocket heartbeats, idle connections, the total send-queue limit. */
  | "sync_sweep"
  /** sync/presence.ts: this instance's `_connections` row changes, written in one batch. */
  | "presence_flush"
  /** sync/presence.ts: this instance's `_instances` heartbeat, removing silent instances' rows. */
  | "presence_beat"
  /** scheduler/runner.ts: renews the leases of the jobs running in this process. */
  | "scheduler_lease_renewal"
  /** sqlite/read-pool.ts: ends read snapshots kept but unused for a tick. */
  | "sqlite_idle_snapshots"
  /** sqlite/cross-process.ts: `PRAGMA data_version`, noticing other processes' commits. */
  | "sqlite_external_commits"
  /** commit-log/follower.ts: reads the commit log when no wake-up came. */
  | "commit_log_poll"
  /** commit-log/follower.ts: deletes log rows beyond the kept number. */
  | "commit_log_prune"
  /** storage/outage-breaker.ts: probes the unreachable database (or read replica) until it answers. */
  | "outage_recovery_probe"
  /** postgres/notify.ts: checks that the LISTEN connection still answers. */
  | "notify_heartbeat";

const durations = new PlainHistogram(
  "service_auth_periodic_task_duration_seconds",
  "Runs of the engine's periodic tasks (sync sweep, presence, lease renewal, commit log polls, probes …), by task; a run that returns a promise counts until it settles",
  [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  metricsRegistry,
);
/** One series per task, made once. */
const series = new Map<TickerTask, HistogramSeries>();

/** A running periodic task. */
export interface Ticking {
  /** No run starts after this (one already running finishes). */
  stop(): void;
}

/**
 * Runs `run` every `everyMs` from now until stopped. A promise it returns is timed until it settles;
 * a rejection is logged with the task's name (tasks log their own failures first where the
 * message matters).
 */
export function tick(task: TickerTask, everyMs: number, run: () => unknown): Ticking {
  let observe = series.get(task);
  if (!observe) series.set(task, (observe = durations.series({ task })));
  const timed = observe;
  const timer = setInterval(() => {
    const startedAt = performance.now();
    const done = () => timed.observe((performance.now() - startedAt) / 1000);
    let result: unknown;
    try {
      result = run();
    } catch (error) {
      done();
      throw error;
    }
    if (result instanceof Promise) {
      result.then(done, (error: unknown) => {
        done();
        logger.warn("periodic task failed", { task, error: String(error) });
      });
    } else {
      done();
    }
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
