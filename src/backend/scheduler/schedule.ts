/**
 * `ctx.scheduler`: run a mutation or an action later. From a mutation the job is written in the
 * mutation's own transaction (a rolled-back mutation schedules nothing; a committed one is never
 * lost); from an action each call is a write of its own.
 */
import type { DatabaseWriter } from "../db/database.ts";
import { AppError } from "../errors.ts";
import { type FunctionReference, functionPath } from "../functions/references.ts";
import type { RegisteredFunction } from "../functions/registered.ts";
import { parseArgs } from "../functions/registry.ts";
import type { JobDocument } from "./tables.ts";

type SchedulableRef = FunctionReference<"mutation" | "action", any, any, any>;

/**
 * `ctx.scheduler` of mutations and actions. @public
 *
 * @example
 * ```ts
 * export const remind = mutation({
 *   args: { userId: v.id("user") },
 *   handler: async (ctx, { userId }) => {
 *     const jobId = await ctx.scheduler.runAfter(60_000, internal.reminders.send, { userId });
 *     return jobId; // ctx.scheduler.cancel(jobId) before it starts cancels it
 *   },
 * });
 * ```
 */
export interface Scheduler {
  /**
   * Runs `ref` with `args` once `delayMs` has passed (0: as soon as possible, after this mutation
   * commits). Returns the job's id (for {@link cancel} and `npm run cli -- jobs list`).
   *
   * @example
   * await ctx.scheduler.runAfter(60_000, internal.reminders.send, { userId });
   */
  runAfter<R extends SchedulableRef>(delayMs: number, ref: R, args: R["_args"]): Promise<string>;
  /** Runs `ref` with `args` at `time` (a `Date` or ms since the epoch; past times run at once). */
  runAt<R extends SchedulableRef>(time: number | Date, ref: R, args: R["_args"]): Promise<string>;
  /** Cancels a job that has not started; false when it already ran, runs, or was canceled. */
  cancel(jobId: string): Promise<boolean>;
}

/** A job's function: checked (and its arguments validated) when scheduled, not when due. */
export type LookupSchedulable = (path: string) => RegisteredFunction;

/** The scheduler over `write`, which runs its callback in a transaction with system-table access. */
export function schedulerOn(
  write: <T>(fn: (db: DatabaseWriter) => Promise<T>) => Promise<T>,
  lookup: LookupSchedulable,
  now: () => number = Date.now,
): Scheduler {
  const schedule = (runAt: number, ref: SchedulableRef | string, args: unknown) => {
    if (!Number.isFinite(runAt)) throw new AppError("BAD_REQUEST", "A job's time must be a finite number");
    const name = functionPath(ref);
    const fn = lookup(name);
    if (fn.kind !== "mutation" && fn.kind !== "action")
      throw new AppError(
        "BAD_REQUEST",
        `Only mutations and actions can be scheduled; ${name} is a ${fn.kind}`,
      );
    const parsed = parseArgs(fn, args ?? {});
    return write((db) =>
      db.insert(
        "_scheduled_jobs" as never,
        { name, kind: fn.kind, args: parsed, runAt, state: "pending" } as never,
      ),
    ) as Promise<string>;
  };
  return {
    runAfter: (delayMs, ref, args) => schedule(now() + Math.max(0, delayMs), ref, args),
    runAt: (time, ref, args) => schedule(time instanceof Date ? time.getTime() : time, ref, args),
    cancel: (jobId) =>
      write(async (db) => {
        if (db.tableOf(jobId) !== ("_scheduled_jobs" as never)) return false;
        const job = (await db.get(jobId as never)) as JobDocument | null;
        if (job?.state !== "pending") return false;
        await db.patch(jobId as never, { state: "canceled", finishedAt: now() } as never);
        return true;
      }),
  };
}
