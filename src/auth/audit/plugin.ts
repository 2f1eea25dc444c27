/**
 * `auditTrail()`: the Better Auth plugin that records security events in the app's own
 * `auditEvent` table (declared with the other auth tables by `defineAuthTables(options)` when the
 * options' plugins include it). Changes are recorded by database hooks, which run inside the
 * adapter's transaction where Better Auth opens one (sign-up), so the event commits with the
 * change; failed sign-ins and key rotations, which change nothing, by route hooks.
 *
 * Only named facts are stored (ids, email, address, user agent, reason codes, role, ban reason
 * and expiry): never a request body, so never a password, token or secret.
 */
import { type BetterAuthPlugin, getCurrentAdapter } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { KEY_PATHS } from "../plugins/backend/index.ts";
import { CLIENT_IP_HEADER } from "../rate-limit/rules.ts";
import { recordUsedUpKey } from "./api-key-reuse.ts";
import { AUDIT_MODEL, type AuditInput, auditRow } from "./events.ts";
import { invitationReuseHook } from "./invitation-reuse.ts";
import { consumesOn, isErrorAnswer, PRESENTED_IDENTIFIER, tombstoneOf, tombstoneRow } from "./reuse.ts";
import { spentReuseHook } from "./spent-reuse.ts";

/** The audit table as Better Auth describes it (`getAuthTables` turns it into the platform table). */
export const AUDIT_SCHEMA = {
  [AUDIT_MODEL]: {
    fields: {
      type: { type: "string", required: true, index: true },
      time: { type: "date", required: true, index: true },
      actorId: { type: "string", required: false, index: true },
      targetId: { type: "string", required: false, index: true },
      email: { type: "string", required: false, index: true },
      ipAddress: { type: "string", required: false },
      userAgent: { type: "string", required: false },
      details: { type: "string", required: true },
    },
  },
} as const;

/** Paths whose failure is a failed sign-in (first factor, second factor, one-time links). */
const SIGN_IN_PATHS = [/^\/sign-in\//, /^\/two-factor\/verify-/, /^\/magic-link\/verify/];

/** The endpoint context a database hook gets (Better Auth's `GenericEndpointContext`), loosely typed. */
type HookContext = {
  path?: string;
  body?: any;
  headers?: Headers;
  request?: Request;
  context: { session?: { user?: { id?: string } } | null; adapter?: any; returned?: unknown };
} | null;

function requestFacts(ctx: HookContext): Pick<AuditInput, "ipAddress" | "userAgent"> {
  const headers = ctx?.headers ?? ctx?.request?.headers;
  return {
    ipAddress: headers?.get(CLIENT_IP_HEADER) ?? null,
    userAgent: headers?.get("user-agent") ?? null,
  };
}

const sessionUserId = (ctx: HookContext) => ctx?.context.session?.user?.id ?? null;
const pathOf = (ctx: HookContext) => ctx?.path ?? "";
const timeOf = (value: unknown) =>
  value instanceof Date ? value.getTime() : value == null ? null : Number(value);

/**
 * Creates the audit trail plugin. Put it in the options the schema is made from, too.
 *
 * @example
 * ```ts
 * // auth-options.ts: in the options `betterAuth` gets and the schema's auth tables are made from.
 * import type { BetterAuthOptions } from "better-auth";
 * import { auditTrail } from "service-auth/auth";
 *
 * export const authSchemaOptions = {
 *   plugins: [auditTrail()],
 * } satisfies BetterAuthOptions;
 * ```
 */
export const auditTrail = () => {
  let baseAdapter: any;

  /** Writes one event with the request's facts through the current (transaction's) adapter. */
  async function record(ctx: HookContext, input: AuditInput): Promise<void> {
    const adapter = await getCurrentAdapter(ctx?.context.adapter ?? baseAdapter);
    const row = auditRow({ ...requestFacts(ctx), ...input });
    await adapter.create({ model: AUDIT_MODEL, data: { ...row, time: new Date(row.time) } });
  }

  const databaseHooks = {
    user: {
      create: {
        after: async (user: any, ctx: HookContext) => {
          const admin = sessionUserId(ctx);
          await record(ctx, {
            type: "sign-up",
            actorId: admin ?? user.id,
            targetId: user.id,
            email: user.email,
            details: { method: pathOf(ctx) || null, ...(admin ? { createdBy: "admin" } : {}) },
          });
        },
      },
      update: {
        after: async (user: any, ctx: HookContext) => {
          if (!user?.id) return;
          const path = pathOf(ctx);
          const base = { actorId: sessionUserId(ctx), targetId: user.id, email: user.email };
          if (path === "/admin/ban-user") {
            await record(ctx, {
              ...base,
              type: "user.banned",
              details: { reason: user.banReason ?? null, expires: timeOf(user.banExpires) },
            });
          } else if (path === "/admin/unban-user") {
            await record(ctx, { ...base, type: "user.unbanned" });
          } else if (path === "/admin/set-role") {
            await record(ctx, { ...base, type: "role.changed", details: { role: user.role ?? null } });
          } else if (path.startsWith("/two-factor/") && typeof user.twoFactorEnabled === "boolean") {
            await record(ctx, {
              ...base,
              actorId: base.actorId ?? user.id,
              type: user.twoFactorEnabled ? "second-factor.enabled" : "second-factor.disabled",
              details: { method: path },
            });
          }
        },
      },
    },
    session: {
      create: {
        after: async (session: any, ctx: HookContext) => {
          const facts = { ipAddress: session.ipAddress ?? null, userAgent: session.userAgent ?? null };
          if (session.impersonatedBy) {
            await record(ctx, {
              ...facts,
              type: "impersonation.started",
              actorId: session.impersonatedBy,
              targetId: session.userId,
              details: { sessionId: session.id },
            });
            return;
          }
          await record(ctx, {
            ...facts,
            type: "sign-in",
            actorId: session.userId,
            targetId: session.userId,
            details: { method: pathOf(ctx) || null, sessionId: session.id },
          });
        },
      },
      delete: {
        after: async (session: any, ctx: HookContext) => {
          const path = pathOf(ctx);
          // An expired session swept on read, or a sign-in session replaced by a second-factor
          // challenge: no one ended anything.
          if (!(timeOf(session.expiresAt)! > Date.now())) return;
          if (path.startsWith("/sign-in/")) return;
          const details = { sessionId: session.id, method: path || null };
          if (path === "/sign-out") {
            await record(ctx, {
              type: "sign-out",
              actorId: session.userId,
              targetId: session.userId,
              details,
            });
          } else if (session.impersonatedBy && path === "/admin/stop-impersonating") {
            await record(ctx, {
              type: "impersonation.stopped",
              actorId: session.impersonatedBy,
              targetId: session.userId,
              details,
            });
          } else {
            await record(ctx, {
              type: "session.revoked",
              actorId: sessionUserId(ctx),
              targetId: session.userId,
              details,
            });
          }
        },
      },
    },
    account: {
      update: {
        after: async (account: any, ctx: HookContext) => {
          const path = pathOf(ctx);
          if (path === "/change-password" && account?.userId) {
            await record(ctx, {
              type: "password.changed",
              actorId: sessionUserId(ctx) ?? account.userId,
              targetId: account.userId,
            });
          } else if (path === "/admin/set-user-password" && typeof ctx?.body?.userId === "string") {
            await record(ctx, {
              type: "password.changed",
              actorId: sessionUserId(ctx),
              targetId: ctx.body.userId,
              details: { by: "admin" },
            });
          }
        },
      },
    },
    verification: {
      delete: {
        after: async (verification: any, ctx: HookContext) => {
          // A consumed one-time credential leaves a tombstone, so a second consumer is recognised (reuse.ts).
          if (consumesOn(pathOf(ctx), verification?.identifier)) {
            const adapter = await getCurrentAdapter(ctx?.context.adapter ?? baseAdapter);
            await adapter.create({ model: "verification", data: tombstoneRow(verification) });
          }
          // A used reset link: its identifier holds the token (never stored), its value the user.
          if (pathOf(ctx) !== "/reset-password") return;
          if (!String(verification.identifier ?? "").startsWith("reset-password:")) return;
          await record(ctx, { type: "password.reset", actorId: null, targetId: String(verification.value) });
        },
      },
    },
  };

  /**
   * Records a reuse refused before Better Auth's endpoint ran (a used TOTP code,
   * one-time/used-totp.ts), which so reaches no after-hook: the failed second factor and the
   * refused reuse, as the hooks below record them for the other flows.
   */
  async function recordRefusedReuse(
    ctx: unknown,
    facts: { targetId: string; reason: string; status: number },
  ) {
    const hook = ctx as HookContext;
    const details = { method: pathOf(hook), reason: facts.reason, status: facts.status };
    await record(hook, { type: "sign-in.failed", actorId: null, targetId: facts.targetId, details });
    await record(hook, { type: "credential.reused", actorId: null, targetId: facts.targetId, details });
  }

  const plugin = {
    id: "audit-trail",
    schema: AUDIT_SCHEMA,
    init: (context: any) => {
      baseAdapter = context.adapter;
      return { options: { databaseHooks } };
    },
    // A used-up API key is refused in the api-key plugin's before-hook: seen only from here.
    onRequest: async (request, context) => {
      await recordUsedUpKey(request, context, record);
    },
    hooks: {
      after: [
        {
          matcher: (ctx) => SIGN_IN_PATHS.some((p) => p.test(ctx.path ?? "")),
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            if (!(returned instanceof APIError)) return;
            const email = typeof ctx.body?.email === "string" ? ctx.body.email.trim().toLowerCase() : null;
            const user = email ? await ctx.context.internalAdapter.findUserByEmail(email) : null;
            await record(ctx as HookContext, {
              type: "sign-in.failed",
              actorId: null,
              targetId: user?.user.id ?? null,
              email,
              details: {
                method: ctx.path,
                reason: (returned.body as { code?: string } | undefined)?.code ?? returned.status,
                status: returned.statusCode,
              },
            });
          }),
        },
        {
          // A failed use of a credential that was consumed before: a refused reuse (reuse.ts).
          matcher: (ctx) => Object.hasOwn(PRESENTED_IDENTIFIER, ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            // A redirect is an APIError too: a sign-in made by this request is no refusal.
            const returned = ctx.context.returned;
            if (!isErrorAnswer(returned) || ctx.context.newSession) return;
            const presented = PRESENTED_IDENTIFIER[ctx.path]!(ctx);
            if (!presented) return;
            const identifiers = typeof presented === "string" ? [presented] : presented;
            const { internalAdapter } = ctx.context;
            const found = async (ids: readonly string[]) => {
              for (const id of ids) if (await internalAdapter.findVerificationValue(id)) return true;
              return false;
            };
            // Still there (a wrong guess at a live credential): no reuse.
            if (await found(identifiers)) return;
            // Consumed before, by another request.
            if (!(await found(identifiers.map(tombstoneOf)))) return;
            const email = typeof ctx.body?.email === "string" ? ctx.body.email.trim().toLowerCase() : null;
            await record(ctx as HookContext, {
              type: "credential.reused",
              actorId: null,
              email,
              details: {
                method: ctx.path,
                reason: (returned.body as { code?: string } | undefined)?.code ?? null,
                status: returned.statusCode,
              },
            });
          }),
        },
        // Used credentials kept outside the verification table.
        spentReuseHook(record),
        invitationReuseHook(record),
        {
          // Server-only: `auth:rotateKeys` (CLI, admin console), which says who asked in `actor`.
          matcher: (ctx) => ctx.path === KEY_PATHS.rotateKeys,
          handler: createAuthMiddleware(async (ctx) => {
            if (ctx.context.returned instanceof APIError) return;
            const actor = typeof ctx.body?.actor === "string" ? ctx.body.actor : null;
            await record(ctx as HookContext, {
              type: "keys.rotated",
              actorId: actor,
              details: { source: typeof ctx.body?.source === "string" ? ctx.body.source : null },
            });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
  // Found by id by the hook that refuses a used TOTP code (one-time/used-totp.ts).
  return Object.assign(plugin, { recordRefusedReuse });
};
