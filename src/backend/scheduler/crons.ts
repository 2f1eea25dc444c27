/**
 * Cron jobs declared by the app: `cronJobs()` collects them; the runner (runner.ts) runs each tick
 * once across every instance and worker. A tick is claimed in the same transaction that schedules
 * its job and moves `_cron_jobs.nextRun` past now, so missed ticks after downtime run once.
 */
import { Cron } from "croner";
import { type FunctionReference, functionPath } from "../functions/references.ts";

type SchedulableRef = FunctionReference<"mutation" | "action", any, any, any>;

/**
 * How often an `interval` cron runs: the parts add up.
 *
 * @example
 * ```ts
 * import type { IntervalSpec } from "service-auth/server";
 *
 * const every90Seconds: IntervalSpec = { minutes: 1, seconds: 30 };
 * crons.interval("sweep", every90Seconds, internal.audit.sweep, {});
 * ```
 */
export interface IntervalSpec {
  ms?: number;
  seconds?: number;
  minutes?: number;
  hours?: number;
}

/** One declared cron job. @internal */
export interface CronJob {
  name: string;
  /** The schedule as declared (`every 300000 ms`, `0 3 * * *`): stored, so a change is noticed. */
  schedule: string;
  /** The first tick strictly after `after` (ms since the epoch). */
  next(after: number): number;
  path: string;
  args: unknown;
}

/**
 * The app's cron jobs (`ServiceOptions.crons`). @public
 *
 * @example
 * ```ts
 * import { type CronJobs, cronJobs } from "service-auth/server";
 *
 * const crons: CronJobs = cronJobs()
 *   .interval("clear presence", { minutes: 5 }, internal.presence.clear, {})
 *   .daily("daily report", { hourUTC: 3 }, internal.reports.send, {})
 *   .cron("weekly cleanup", "0 4 * * 1", internal.cleanup.run, {});
 * ```
 */
export interface CronJobs {
  /**
   * Every `every`, counted from the epoch (ticks at whole multiples, so every instance agrees).
   *
   * @example
   * crons.interval("clear presence", { minutes: 5 }, internal.presence.clear, {});
   */
  interval<R extends SchedulableRef>(name: string, every: IntervalSpec, ref: R, args: R["_args"]): CronJobs;
  /** Once a day at `hourUTC:minuteUTC`. */
  daily<R extends SchedulableRef>(
    name: string,
    at: { hourUTC: number; minuteUTC?: number },
    ref: R,
    args: R["_args"],
  ): CronJobs;
  /**
   * A cron expression in UTC (five fields, or six with seconds first), e.g. `"0 3 * * *"`.
   * An invalid expression throws here, at declaration.
   */
  cron<R extends SchedulableRef>(name: string, expression: string, ref: R, args: R["_args"]): CronJobs;
  /** The declared jobs. @internal */
  readonly jobs: readonly CronJob[];
}

/**
 * Starts a list of cron jobs for `ServiceOptions.crons`. @public
 *
 * @example
 * ```ts
 * import { cronJobs, startService } from "service-auth/server";
 *
 * const crons = cronJobs().interval("delete expired", { minutes: 10 }, internal.auth.deleteExpired, {});
 * await startService({ schema, modules, crons });
 * ```
 */
export function cronJobs(): CronJobs {
  const jobs: CronJob[] = [];
  const add = (job: CronJob) => {
    if (!job.name || jobs.some((j) => j.name === job.name))
      throw new Error(`Cron job names must be unique and non-empty: "${job.name}"`);
    jobs.push(job);
    return api;
  };
  const byExpression = (name: string, expression: string, ref: SchedulableRef | string, args: unknown) => {
    const cron = new Cron(expression, { timezone: "UTC", paused: true });
    return add({
      name,
      schedule: expression,
      path: functionPath(ref),
      args: args ?? {},
      next: (after) => {
        const next = cron.nextRun(new Date(after));
        if (!next) throw new Error(`Cron job "${name}" (${expression}) has no next run`);
        return next.getTime();
      },
    });
  };
  const api: CronJobs = {
    jobs,
    interval: (name, every, ref, args) => {
      const ms =
        (every.ms ?? 0) +
        (every.seconds ?? 0) * 1000 +
        (every.minutes ?? 0) * 60_000 +
        (every.hours ?? 0) * 3_600_000;
      if (!Number.isFinite(ms) || ms < 1)
        throw new Error(`Cron job "${name}": the interval must be at least 1 ms`);
      return add({
        name,
        schedule: `every ${ms} ms`,
        path: functionPath(ref),
        args: args ?? {},
        next: (after) => (Math.floor(after / ms) + 1) * ms,
      });
    },
    daily: (name, at, ref, args) => {
      const { hourUTC, minuteUTC = 0 } = at;
      if (
        !Number.isInteger(hourUTC) ||
        hourUTC < 0 ||
        hourUTC > 23 ||
        !Number.isInteger(minuteUTC) ||
        minuteUTC < 0 ||
        minuteUTC > 59
      )
        throw new Error(`Cron job "${name}": hourUTC must be 0–23 and minuteUTC 0–59`);
      return byExpression(name, `${minuteUTC} ${hourUTC} * * *`, ref, args);
    },
    cron: (name, expression, ref, args) => byExpression(name, expression, ref, args),
  };
  return api;
}
