/**
 * The audit trail's retention on the platform's scheduler: events older than
 * `AUDIT_RETENTION_DAYS` (default 90) are deleted by a cron job ({@link auditRetentionCrons}),
 * which runs once per tick across every instance and worker. Its mutation (`audit:sweep`, made by
 * `createAuditFunctions`) deletes one bounded batch per transaction, so no run holds the write lock
 * for long, and schedules the next batch itself while it finds a full one.
 */
import type { CronJobs, FunctionReference, IntervalSpec } from "service-auth/server";

export const AUDIT_RETENTION_VAR = "AUDIT_RETENTION_DAYS";
export const DEFAULT_AUDIT_RETENTION_DAYS = 90;
/** How often the retention cron runs by default. */
export const AUDIT_SWEEP_EVERY: IntervalSpec = { hours: 1 };
export const DAY_MS = 24 * 60 * 60 * 1000;

/** `AUDIT_RETENTION_DAYS` from the env store: a positive whole number of days. */
export function auditRetentionDays(env: { get(name: string): string | undefined }): number {
  const text = env.get(AUDIT_RETENTION_VAR);
  if (text === undefined || text === "") return DEFAULT_AUDIT_RETENTION_DAYS;
  const days = Number(text);
  if (!Number.isSafeInteger(days) || days < 1)
    throw new Error(`${AUDIT_RETENTION_VAR} must be a whole number of days (at least 1)`);
  return days;
}

/**
 * The retention's name among the app's crons.
 *
 * @example
 * ```ts
 * import { AUDIT_RETENTION_CRON } from "service-auth/auth";
 *
 * // The retention's job name, e.g. to find its runs among the scheduler's jobs.
 * const isRetention = (job: { name: string }) => job.name === AUDIT_RETENTION_CRON;
 * ```
 */
export const AUDIT_RETENTION_CRON = "audit: delete events older than AUDIT_RETENTION_DAYS";

/**
 * What one `audit:sweep` run did; `more`: it found a full batch and scheduled the next.
 *
 * @example
 * ```ts
 * import type { AuditSweepResult } from "service-auth/auth";
 *
 * const { value } = await backend.runMutation(internal.audit.sweep, {}, { allowInternal: true });
 * const result = value as AuditSweepResult;
 * console.log(`deleted ${result.deleted}${result.more ? ", next batch scheduled" : ""}`);
 * ```
 */
export interface AuditSweepResult {
  deleted: number;
  more: boolean;
}

/**
 * Adds the retention to `crons`, every `every` (default an hour). `sweep` is the app's
 * `audit:sweep` (from `createAuditFunctions({ self })`).
 *
 * @example
 * crons: auditRetentionCrons(cronJobs(), internal.audit.sweep)
 */
export function auditRetentionCrons(
  crons: CronJobs,
  sweep: FunctionReference<"mutation", any, { batch?: number }, AuditSweepResult>,
  every: IntervalSpec = AUDIT_SWEEP_EVERY,
): CronJobs {
  return crons.interval(AUDIT_RETENTION_CRON, every, sweep, {});
}
