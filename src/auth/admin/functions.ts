/**
 * `createAdminFunctions`: the admin console's live queries, checked through the normal identity
 * path (step 1 + step 2, then the caller's `role` read from the `user` table). Export them from an
 * app module (e.g. `admin.ts`), so they run as `admin:users`, `admin:sessions`, … over HTTP and
 * the WebSocket like any other query. The one mutation, `disconnect`, closes a session's live
 * connections (a platform operation); every other change goes to Better Auth's admin endpoints
 * (`/api/auth/admin/*`), which apply the same role rule.
 */
import {
  AppError,
  functionsFor,
  type JobState,
  type LiveConnection,
  type QueryCtx,
  type ScheduledJobView,
} from "service-auth/server";
import { type Id, v } from "service-auth/values";
import { auditFilterArgs } from "../audit/functions.ts";
import { type AuditEventView, findAuditEvents } from "../audit/query.ts";
import { getAuthUserId, getAuthUserIdentity } from "../current-user.ts";
import { JWKS_VAR } from "../keys/auth-env.ts";
import { isActiveKey, parseStoredJwks } from "../keys/stored-jwks.ts";

/** Longest search text the users list accepts. */
export const MAX_SEARCH_LENGTH = 200;
/** Largest page the users list returns. */
export const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 20;

/**
 * Options of {@link createAdminFunctions}: which roles count as administrators.
 *
 * @example
 * ```ts
 * import { type AdminFunctionsOptions, createAdminFunctions } from "service-auth/app";
 *
 * const options: AdminFunctionsOptions = { adminRoles: ["admin", "owner"] };
 * export const { viewer, users, sessions, keys } = createAdminFunctions(options);
 * ```
 */
export interface AdminFunctionsOptions {
  /** Roles that may administer (Better Auth's admin plugin `adminRoles`; default `["admin"]`). */
  adminRoles?: readonly string[];
}

/**
 * The signed-in administrator, as `viewer` returns them.
 *
 * @example
 * ```ts
 * import type { AdminViewer } from "service-auth/app";
 *
 * // What `admin:viewer` returns to the console.
 * function greeting(viewer: AdminViewer): string {
 *   return `Signed in as ${viewer.name} <${viewer.email}> (${viewer.role})`;
 * }
 * ```
 */
export interface AdminViewer {
  _id: Id<"user">;
  name: string;
  email: string;
  role: string;
}

/**
 * One row of the users list.
 *
 * @example
 * ```ts
 * import type { AdminUserRow } from "service-auth/app";
 *
 * // One row of `admin:users`' page.
 * function statusOf(row: AdminUserRow): string {
 *   return row.banned ? `banned: ${row.banReason ?? "no reason given"}` : (row.role ?? "user");
 * }
 * ```
 */
export interface AdminUserRow {
  _id: Id<"user">;
  name: string;
  email: string;
  role: string | null;
  banned: boolean;
  banReason: string | null;
  banExpires: number | null;
  createdAt: number;
}

/**
 * One session of a user (the token stays on the server).
 *
 * @example
 * ```ts
 * import type { AdminSessionRow } from "service-auth/app";
 *
 * // The rows of `admin:sessions` other than the console's own.
 * function otherSessions(rows: AdminSessionRow[]): AdminSessionRow[] {
 *   return rows.filter((row) => !row.current && row.expiresAt > Date.now());
 * }
 * ```
 */
export interface AdminSessionRow {
  _id: Id<"session">;
  ipAddress: string | null;
  userAgent: string | null;
  createdAt: number;
  expiresAt: number;
  impersonatedBy: string | null;
  /** True for the session the calling administrator is using (the console's own). */
  current: boolean;
}

/**
 * One signing key: its `kid` (the row id) and creation time; key material stays on the server.
 *
 * @example
 * ```ts
 * import type { AdminKeyRow } from "service-auth/app";
 *
 * // A row of `admin:keys`, as the console lists it.
 * function describeKey(key: AdminKeyRow): string {
 *   const until = key.expiresAt ? ` until ${new Date(key.expiresAt).toISOString()}` : "";
 *   return `${key.kid}: ${key.state}${until}`;
 * }
 * ```
 */
export interface AdminKeyRow {
  kid: string;
  createdAt: number;
  /**
   * `signing`: the key the servers sign new tokens with (the newest active key of `JWKS`, or of
   * the table without it). `retiring`: replaced by a graceful rotation, still verifying until
   * `expiresAt`, when the scheduled retirement removes it.
   */
  state: "signing" | "retiring" | "standby";
  /** When a retiring key stops verifying (ms since epoch). */
  expiresAt?: number;
}

/**
 * Better Auth stores several roles comma-separated ("user,admin").
 *
 * @example
 * ```ts
 * import { hasRole } from "service-auth/app";
 *
 * hasRole("user,admin", ["admin"]); // true
 * hasRole(undefined, ["admin"]); // false
 * ```
 */
export function hasRole(role: unknown, roles: readonly string[]): boolean {
  if (typeof role !== "string") return false;
  return role.split(",").some((r) => roles.includes(r.trim()));
}

/**
 * The calling user when they hold an admin role: `UNAUTHORIZED` without a valid session,
 * `FORBIDDEN` for anyone else.
 *
 * @example
 * ```ts
 * import { requireAdmin } from "service-auth/app";
 * import { query } from "./functions.ts";
 *
 * // An app query only administrators may call.
 * export const userCount = query({
 *   args: {},
 *   handler: async (ctx) => {
 *     await requireAdmin(ctx); // UNAUTHORIZED / FORBIDDEN otherwise
 *     return (await ctx.db.query("user").collect()).length;
 *   },
 * });
 * ```
 */
export async function requireAdmin(
  ctx: QueryCtx<any>,
  adminRoles: readonly string[] = ["admin"],
): Promise<AdminViewer> {
  const userId = await getAuthUserId(ctx);
  if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
  const user = await ctx.db.get("user", userId);
  if (!user) throw new AppError("UNAUTHORIZED", "Sign in first");
  if (!hasRole(user.role, adminRoles)) throw new AppError("FORBIDDEN", "Administrators only");
  return { _id: user._id, name: String(user.name), email: String(user.email), role: String(user.role) };
}

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

function userRow(user: Record<string, any>): AdminUserRow {
  return {
    _id: user._id,
    name: user.name,
    email: user.email,
    role: orNull(user.role),
    banned: user.banned === true,
    banReason: orNull(user.banReason),
    banExpires: orNull(user.banExpires),
    createdAt: user.createdAt,
  };
}

/** Longest session id `disconnect` accepts. */
const MAX_SESSION_ID_LENGTH = 128;

/**
 * The admin console's functions: queries `viewer`, `users`, `sessions`, `connections`, `keys`,
 * `audit`, `jobs` and the mutation `disconnect`.
 *
 * @example
 * ```ts
 * // admin.ts: the console's functions, as `admin:viewer`, `admin:users`, …
 * import { createAdminFunctions } from "service-auth/app";
 *
 * export const { viewer, users, sessions, connections, disconnect, keys, audit, jobs } =
 *   createAdminFunctions();
 * ```
 */
export function createAdminFunctions(options: AdminFunctionsOptions = {}) {
  const adminRoles = options.adminRoles ?? ["admin"];
  const { query, mutation } = functionsFor();
  return {
    /** The calling administrator (or `UNAUTHORIZED` / `FORBIDDEN`): the console's access check. */
    viewer: query({ args: {}, handler: (ctx): Promise<AdminViewer> => requireAdmin(ctx, adminRoles) }),

    /** Users, newest first, a page at a time; `search` matches name or email (case-insensitive). */
    users: query({
      args: {
        search: v.optional(v.string()),
        cursor: v.optional(v.union(v.string(), v.null())),
        numItems: v.optional(v.number()),
      },
      handler: async (ctx, args) => {
        await requireAdmin(ctx, adminRoles);
        const search = (args.search ?? "").trim().toLowerCase();
        if (search.length > MAX_SEARCH_LENGTH) {
          throw new AppError("BAD_REQUEST", `Search text has at most ${MAX_SEARCH_LENGTH} characters`);
        }
        const numItems = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(args.numItems ?? DEFAULT_PAGE_SIZE)));
        let q = ctx.db.query("user").order("desc");
        if (search) {
          q = q.filter(
            (u: any) =>
              String(u.name).toLowerCase().includes(search) || String(u.email).toLowerCase().includes(search),
          );
        }
        const result = await q.paginate({ cursor: args.cursor ?? null, numItems });
        return {
          page: result.page.map(userRow),
          isDone: result.isDone,
          continueCursor: result.continueCursor,
        };
      },
    }),

    /** A user's sessions, newest first, without their tokens; the caller's own one marked `current`. */
    sessions: query({
      args: { userId: v.id("user") },
      handler: async (ctx, { userId }): Promise<AdminSessionRow[]> => {
        await requireAdmin(ctx, adminRoles);
        const callerSession = (await getAuthUserIdentity(ctx))?.sessionId;
        const sessions = await ctx.db
          .query("session")
          .withIndex("userId", (q: any) => q.eq("userId", userId as Id<"user">))
          .collect();
        return sessions
          .map((s: any) => ({
            _id: s._id,
            ipAddress: orNull(s.ipAddress),
            userAgent: orNull(s.userAgent),
            createdAt: s.createdAt,
            expiresAt: s.expiresAt,
            impersonatedBy: orNull(s.impersonatedBy),
            current: s._id === callerSession,
          }))
          .sort((a, b) => b.createdAt - a.createdAt);
      },
    }),

    /**
     * The audit trail, newest first, filtered by user (id or email), event type and time (needs
     * the `auditTrail()` plugin's table).
     */
    audit: query({
      args: auditFilterArgs,
      handler: async (ctx, args): Promise<AuditEventView[]> => {
        await requireAdmin(ctx, adminRoles);
        return findAuditEvents(ctx.db as any, args);
      },
    }),

    /**
     * A user's open WebSocket connections on every instance (since when, address, user agent,
     * subscriptions, instance), oldest first; each names its session (`sessionId`).
     */
    connections: query({
      args: { userId: v.id("user") },
      handler: async (ctx, { userId }): Promise<LiveConnection[]> => {
        await requireAdmin(ctx, adminRoles);
        return ctx.connections.list({ subject: userId });
      },
    }),

    /**
     * Closes a session's live connections on every instance. The session stays valid: its
     * clients may reconnect (revoke the session to end it).
     */
    disconnect: mutation({
      args: { sessionId: v.string() },
      handler: async (ctx, { sessionId }): Promise<null> => {
        await requireAdmin(ctx as unknown as QueryCtx<any>, adminRoles);
        if (sessionId.length === 0 || sessionId.length > MAX_SESSION_ID_LENGTH)
          throw new AppError("BAD_REQUEST", "Not a session id");
        await ctx.connections.disconnect({ sessionId });
        return null;
      },
    }),

    /**
     * The scheduler's latest jobs (every instance's), newest first, optionally in one state:
     * function, state, due and finish times, a failure's error; never their arguments.
     */
    jobs: query({
      args: { state: v.optional(v.string()), limit: v.optional(v.number()) },
      handler: async (ctx, { state, limit }): Promise<ScheduledJobView[]> => {
        await requireAdmin(ctx, adminRoles);
        return ctx.scheduledJobs.list({ state: state as JobState | undefined, limit: limit ?? 50 });
      },
    }),

    /**
     * The signing keys, newest first: the `jwks` table's, and a stored `JWKS`'s that the table
     * lacks. The signing one is the one the servers sign with: the newest active key of `JWKS`
     * when it is set (that is what they read), of the table otherwise.
     */
    keys: query({
      args: {},
      handler: async (ctx): Promise<AdminKeyRow[]> => {
        await requireAdmin(ctx, adminRoles);
        const time = (t: unknown) =>
          t == null ? undefined : typeof t === "number" ? t : new Date(t as string).getTime();
        const table = (await ctx.db.query("jwks").order("desc").collect()).map((r: any) => ({
          id: r._id as string,
          createdAt: time(r.createdAt) as number,
          expiresAt: time(r.expiresAt),
        }));
        const variable = ctx.env.get(JWKS_VAR);
        let served: { id: string; createdAt: number; expiresAt?: number }[] = table;
        if (variable) {
          try {
            served = parseStoredJwks(variable);
          } catch {
            served = []; // an unreadable JWKS signs nothing
          }
        }
        const known = new Set(table.map((r) => r.id));
        // The table's newest first, then the variable's keys the table lacks, newest first.
        const extra = variable ? served.filter((r) => !known.has(r.id)) : [];
        const rows = [...table, ...extra.sort((a, b) => b.createdAt - a.createdAt)];
        const now = Date.now();
        const signer = served
          .filter((r) => isActiveKey(r, now))
          .reduce<{ id: string; createdAt: number } | undefined>(
            (a, r) => (!a || r.createdAt > a.createdAt ? r : a),
            undefined,
          );
        return rows.map((r): AdminKeyRow => {
          const state = r.id === signer?.id ? "signing" : r.expiresAt !== undefined ? "retiring" : "standby";
          return {
            kid: r.id,
            createdAt: r.createdAt,
            state,
            ...(r.expiresAt !== undefined ? { expiresAt: r.expiresAt } : {}),
          };
        });
      },
    }),
  };
}
