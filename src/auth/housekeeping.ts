/**
 * The auth tables' housekeeping, on the platform's scheduler. Better Auth deletes an expired
 * session only when someone looks it up, and never an unused verification row, so without this
 * both tables grow for ever. {@link expiredRowsCleanup} deletes expired rows a batch per
 * transaction (scheduling itself again while a full batch was found, so no transaction grows with
 * the table); {@link authHousekeepingCrons} runs it on a cron. Live sockets of a deleted session
 * have already ended: the WebSocket's expiry sweep closes them when the session expires.
 */
import {
  type CronJobs,
  type FunctionBuilders,
  type FunctionReference,
  functionsFor,
  type IntervalSpec,
  type SchemaDefinition,
  v,
} from "service-auth/server";

/**
 * Rows deleted by one run; `more`: a full batch was found, and the next run is scheduled.
 *
 * @example
 * ```ts
 * import type { CleanupResult } from "service-auth/auth";
 *
 * const { value } = await backend.runMutation(internal.auth.deleteExpired, {}, { allowInternal: true });
 * const { sessions, verifications, more } = value as CleanupResult;
 * console.log(`deleted ${sessions} sessions, ${verifications} verifications${more ? " (continuing)" : ""}`);
 * ```
 */
export interface CleanupResult {
  sessions: number;
  verifications: number;
  more: boolean;
}

/**
 * Options of {@link expiredRowsCleanup}: its own reference (to continue in further batches), the
 * mutation builder, the batch size and renamed tables.
 *
 * @example
 * ```ts
 * import { type CleanupOptions, expiredRowsCleanup } from "service-auth/auth";
 * import { anyApi } from "service-auth/server";
 *
 * const options: CleanupOptions = { self: anyApi.auth.deleteExpired, internalMutation, batch: 200 };
 * export const deleteExpired = expiredRowsCleanup(schema, options);
 * ```
 */
export interface CleanupOptions {
  /** The cleanup's own reference, to continue in further batches (e.g. `internal.auth.deleteExpired`). */
  self: FunctionReference<"mutation", any, { batch?: number }, CleanupResult>;
  /** The app's internal mutation builder, when it wraps writes in triggers (as `createApi` takes). */
  internalMutation?: FunctionBuilders<any>["internalMutation"];
  /** Rows per table per transaction (default 500). */
  batch?: number;
  /** Table names when the auth options rename the models (default `session`, `verification`). */
  tables?: { session?: string; verification?: string };
}

/**
 * The cleanup as an internal mutation: export it from the app's auth module and give its
 * reference as `self`.
 *
 * @example
 * export const deleteExpired = expiredRowsCleanup(schema, { self: internal.auth.deleteExpired });
 */
export function expiredRowsCleanup<S extends SchemaDefinition>(schema: S, options: CleanupOptions) {
  const mutation = options.internalMutation ?? functionsFor(schema).internalMutation;
  const tables = [options.tables?.session ?? "session", options.tables?.verification ?? "verification"];
  const defaultBatch = options.batch ?? 500;
  return mutation({
    args: { batch: v.optional(v.number()) },
    handler: async (ctx: any, { batch = defaultBatch }: { batch?: number }): Promise<CleanupResult> => {
      const size = Math.max(1, Math.min(Math.floor(batch), 10_000));
      const now = Date.now();
      const counts: number[] = [];
      for (const table of tables) {
        const expired = await ctx.db
          .query(table)
          .withIndex("expiresAt", (q: any) => q.lt("expiresAt", now))
          .take(size);
        for (const row of expired) await ctx.db.delete(row._id);
        counts.push(expired.length);
      }
      const more = counts.some((n) => n === size);
      if (more) await ctx.scheduler.runAfter(0, options.self, { batch: size });
      return { sessions: counts[0], verifications: counts[1], more };
    },
  });
}

/** The cleanup's name among the app's crons. */
export const CLEANUP_CRON = "auth: delete expired sessions and verifications";

/**
 * Adds the cleanup to `crons`, every `every` (default 10 minutes).
 *
 * @example
 * export const crons = authHousekeepingCrons(cronJobs(), internal.auth.deleteExpired);
 */
export function authHousekeepingCrons(
  crons: CronJobs,
  cleanup: CleanupOptions["self"],
  every: IntervalSpec = { minutes: 10 },
): CronJobs {
  return crons.interval(CLEANUP_CRON, every, cleanup, {});
}
