/**
 * `createAuditFunctions`: the audit trail's internal functions, exported from an app module
 * (e.g. `audit.ts`, so they run as `audit:list`, `audit:record`, `audit:prune`, `audit:sweep`): the CLI's read,
 * the record of events Better Auth does not see (environment changes from the CLI, an app's own
 * role changes) and the retention's batch delete (`prune`, and `sweep`, the retention cron's run). The console's live read is
 * `admin:audit` (admin/functions.ts).
 */
import { AppError, type FunctionReference, functionsFor } from "service-auth/server";
import { v } from "service-auth/values";
import { AUDIT_MODEL, type AuditInput, auditRow, isAuditEventType } from "./events.ts";
import { findAuditEvents, pruneAuditEvents } from "./query.ts";
import { type AuditSweepResult, auditRetentionDays, DAY_MS } from "./retention.ts";

/** Largest batch one prune deletes (one short transaction each). */
export const MAX_PRUNE_BATCH = 1000;

/** The validators of an audit filter (the console's and the CLI's). */
export const auditFilterArgs = {
  user: v.optional(v.string()),
  type: v.optional(v.string()),
  since: v.optional(v.number()),
  until: v.optional(v.number()),
  limit: v.optional(v.number()),
};

/** A writer of audit rows: `ctx.db` of a mutation. */
type Writer = { insert(table: string, doc: any): Promise<unknown> };

/**
 * Records one event in the caller's transaction (`ctx.db` of a mutation), for changes an app makes
 * itself (e.g. a role set from the CLI). Pass named facts only: never a password, token or secret.
 *
 * @example
 * ```ts
 * import { recordAuditEvent } from "service-auth/app";
 * import { v } from "service-auth/server";
 * import { internalMutation } from "./functions.ts";
 *
 * export const setRole = internalMutation({
 *   args: { userId: v.id("user"), role: v.string() },
 *   handler: async (ctx, { userId, role }) => {
 *     await ctx.db.patch(userId, { role, updatedAt: Date.now() });
 *     // Same transaction as the change: both commit, or neither.
 *     await recordAuditEvent(ctx.db, {
 *       type: "role.changed",
 *       targetId: userId,
 *       details: { role, source: "app" },
 *     });
 *   },
 * });
 * ```
 */
export async function recordAuditEvent(db: Writer, input: AuditInput): Promise<void> {
  if (!isAuditEventType(input.type)) throw new AppError("BAD_REQUEST", "Unknown audit event type");
  await db.insert(AUDIT_MODEL, auditRow(input));
}

/**
 * References to the audit functions the app exports (e.g. `internal.audit`).
 *
 * @example
 * ```ts
 * // audit.ts
 * import { type AuditFunctionRefs, createAuditFunctions } from "service-auth/auth";
 * import { anyApi } from "service-auth/server";
 *
 * const self: AuditFunctionRefs = anyApi.audit;
 * export const { list, record, prune, sweep } = createAuditFunctions({ self });
 * ```
 */
export interface AuditFunctionRefs {
  sweep: FunctionReference<"mutation", any, { batch?: number; now?: number }, AuditSweepResult>;
}

/**
 * The audit trail's internal functions. `self`: the module's own references, so `sweep` can
 * schedule its next batch (without it, one run deletes one batch).
 *
 * @example
 * ```ts
 * // audit.ts: `audit:list`, `audit:record`, `audit:prune`, `audit:sweep`.
 * import { type AuditFunctionRefs, createAuditFunctions } from "service-auth/auth";
 * import { anyApi } from "service-auth/server";
 *
 * const self: AuditFunctionRefs = anyApi.audit;
 * export const { list, record, prune, sweep } = createAuditFunctions({ self });
 * ```
 */
export function createAuditFunctions(options: { self?: AuditFunctionRefs } = {}) {
  const { internalQuery, internalMutation } = functionsFor();
  return {
    /** Events matching the filter, newest first (the CLI's `audit` command). */
    list: internalQuery({
      args: auditFilterArgs,
      handler: (ctx, args) => findAuditEvents(ctx.db as any, args),
    }),
    /** Records one event (e.g. `env.changed` from the CLI). */
    record: internalMutation({
      args: {
        type: v.string(),
        actorId: v.optional(v.string()),
        targetId: v.optional(v.string()),
        email: v.optional(v.string()),
        details: v.optional(v.any()),
      },
      handler: async (ctx, args) => {
        if (!isAuditEventType(args.type)) throw new AppError("BAD_REQUEST", "Unknown audit event type");
        const details = args.details && typeof args.details === "object" ? args.details : {};
        await recordAuditEvent(ctx.db as any, { ...args, type: args.type, details });
        return null;
      },
    }),
    /** Deletes up to `batch` events older than `before` (ms since epoch); returns the count. */
    prune: internalMutation({
      args: { before: v.number(), batch: v.optional(v.number()) },
      handler: (ctx, { before, batch }) =>
        pruneAuditEvents(
          ctx.db as any,
          before,
          Math.min(MAX_PRUNE_BATCH, Math.max(1, Math.floor(batch ?? MAX_PRUNE_BATCH))),
        ),
    }),
    /**
     * The retention cron's run: deletes a batch of events older than `AUDIT_RETENTION_DAYS` (as
     * of `now`, default the current time) and, when the batch was full, schedules the next one.
     */
    sweep: internalMutation({
      args: { batch: v.optional(v.number()), now: v.optional(v.number()) },
      handler: async (ctx, { batch, now }): Promise<AuditSweepResult> => {
        const size = Math.min(MAX_PRUNE_BATCH, Math.max(1, Math.floor(batch ?? MAX_PRUNE_BATCH)));
        const before = (now ?? Date.now()) - auditRetentionDays(ctx.env) * DAY_MS;
        const deleted = await pruneAuditEvents(ctx.db as any, before, size);
        const { self } = options;
        if (deleted < size || !self) return { deleted, more: false };
        await ctx.scheduler.runAfter(0, self.sweep, { batch: size, now });
        return { deleted, more: true };
      },
    }),
  };
}
