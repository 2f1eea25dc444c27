/**
 * `ctx.scheduledJobs`: the scheduler's queue as a query reads it (`_scheduled_jobs`, a system
 * table app functions cannot otherwise read), with the query's read set, so a live query listing
 * jobs updates as they are scheduled, claimed and finished. Arguments are never returned: they may
 * hold what only the job's function should see (a queued email's link).
 */
import type { DatabaseReaderImpl } from "../db/database.ts";
import { AppError } from "../errors.ts";
import { JOB_STATES, type JobDocument, type JobState } from "./tables.ts";

/**
 * One scheduled job as `ctx.scheduledJobs.list` shows it (no arguments). @public
 *
 * @example
 * ```ts
 * import type { ScheduledJobView } from "service-auth/server";
 *
 * function summary(job: ScheduledJobView): string {
 *   return `${job.name} (${job.kind}) ${job.state}${job.error ? `: ${job.error}` : ""}`;
 * }
 * ```
 */
export interface ScheduledJobView {
  _id: string;
  /** When it was scheduled, ms since the epoch. */
  _creationTime: number;
  /** The function's path, `module:name`. */
  name: string;
  kind: "mutation" | "action";
  state: JobState;
  /** When it is (or was) due. */
  runAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** Why it failed (its error's message). */
  error: string | null;
  /** The cron job that scheduled it. */
  cron: string | null;
}

/**
 * Which jobs: those in one state (else any), the latest `limit` (default 50, at most 500). @public
 *
 * @example
 * ```ts
 * import type { ScheduledJobsFilter } from "service-auth/server";
 *
 * const lastFailures: ScheduledJobsFilter = { state: "failed", limit: 20 };
 * const failed = await ctx.scheduledJobs.list(lastFailures);
 * ```
 */
export interface ScheduledJobsFilter {
  state?: JobState;
  limit?: number;
}

/**
 * `ctx.scheduledJobs` of queries and mutations. @public
 *
 * @example
 * ```ts
 * export const failedJobs = internalQuery({
 *   args: {},
 *   handler: async (ctx) => ctx.scheduledJobs.list({ state: "failed", limit: 10 }),
 * });
 * ```
 */
export interface ScheduledJobsReader {
  /**
   * The latest jobs, newest first: by due time within one `state`, by scheduling time across all.
   * A live query re-runs as they change.
   */
  list(filter?: ScheduledJobsFilter): Promise<ScheduledJobView[]>;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;
const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export function scheduledJobsReader(system: DatabaseReaderImpl): ScheduledJobsReader {
  return {
    async list(filter = {}) {
      const { state, limit = DEFAULT_LIMIT } = filter ?? {};
      if (state !== undefined && !JOB_STATES.includes(state))
        throw new AppError("BAD_REQUEST", `state must be one of ${JOB_STATES.join(", ")}`);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
        throw new AppError("BAD_REQUEST", `limit must be a whole number from 1 to ${MAX_LIMIT}`);
      const jobs = system.query("_scheduled_jobs");
      const rows = (await (state === undefined
        ? jobs.order("desc")
        : jobs.withIndex("by_state_runAt", (q: any) => q.eq("state", state)).order("desc")
      ).take(limit)) as unknown as JobDocument[];
      return rows.map((job) => ({
        _id: job._id,
        _creationTime: job._creationTime,
        name: job.name,
        kind: job.kind,
        state: job.state,
        runAt: job.runAt,
        startedAt: orNull(job.startedAt),
        finishedAt: orNull(job.finishedAt),
        error: orNull(job.error),
        cron: orNull(job.cron),
      }));
    },
  };
}
