/**
 * The scheduler's system tables, stored beside the application's (and `_env`), so jobs live in
 * the same database, transactions and backups as the data they act on.
 *
 * A job moves `pending` → `running` → `done` | `failed`, or `pending` → `canceled`. `running`
 * carries the runner that claimed it (`owner`) and a lease the runner renews while it lives; a job
 * whose lease ran out belonged to a runner that died.
 */
import { defineTable } from "../schema.ts";
import { v } from "../values/validators.ts";

export const JOB_STATES = ["pending", "running", "done", "failed", "canceled"] as const;
/**
 * The state of a scheduled job: `pending` → `running` → `done` | `failed`, or `pending` →
 * `canceled`.
 *
 * @example
 * ```ts
 * import type { JobState } from "service-auth/server";
 *
 * const finished = (state: JobState): boolean => state === "done" || state === "failed" || state === "canceled";
 * ```
 */
export type JobState = (typeof JOB_STATES)[number];

export const SCHEDULER_TABLES = {
  _scheduled_jobs: defineTable({
    /** The function's path, `module:name`. */
    name: v.string(),
    kind: v.union(v.literal("mutation"), v.literal("action")),
    args: v.any(),
    /** When it is due, ms since the epoch (for a cron's run: the tick it stands for). */
    runAt: v.number(),
    state: v.union(...JOB_STATES.map((s) => v.literal(s))),
    /** The runner that claimed it (while `running`, and after). */
    owner: v.optional(v.string()),
    /** While `running`: the claim is the owner's until then; renewed while the owner lives. */
    leaseUntil: v.optional(v.number()),
    startedAt: v.optional(v.number()),
    finishedAt: v.optional(v.number()),
    /** Why it failed (the error's message, bounded). */
    error: v.optional(v.string()),
    /** The cron job that scheduled it, if any. */
    cron: v.optional(v.string()),
  })
    .index("by_state_runAt", ["state", "runAt"])
    .index("by_state_lease", ["state", "leaseUntil"])
    .index("by_state_finished", ["state", "finishedAt"]),
  _cron_jobs: defineTable({
    name: v.string(),
    /** The schedule as declared; a changed schedule starts counting anew. */
    schedule: v.string(),
    /** The next tick to run, ms since the epoch. */
    nextRun: v.number(),
  }).index("name", ["name"]),
};

/** A stored job, as the runner and the CLI see it. */
export interface JobDocument {
  _id: string;
  _creationTime: number;
  name: string;
  kind: "mutation" | "action";
  args: unknown;
  runAt: number;
  state: JobState;
  owner?: string;
  leaseUntil?: number;
  startedAt?: number;
  finishedAt?: number;
  error?: string;
  cron?: string;
}
