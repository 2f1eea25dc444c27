/**
 * Identity helpers of requirements §4.2 for any function ctx (query, mutation, action, HTTP action).
 * They read what step 2 already established; `getSession` reads the session document when the
 * ctx has a database.
 */
import type { ActionCtx, Auth, DatabaseReader, RequestMeta } from "service-auth/server";
import type { Id } from "service-auth/values";
import type { AuthFunctions } from "./data/functions.ts";
import type { AuthIdentity } from "./identity.ts";

/**
 * The minimum a ctx needs for the helpers.
 *
 * @example
 * ```ts
 * import { getAuthUserId, type IdentityCtx } from "service-auth/app";
 *
 * // Any function ctx (query, mutation, action, HTTP action) is an IdentityCtx.
 * async function signedIn(ctx: IdentityCtx): Promise<boolean> {
 *   return (await getAuthUserId(ctx)) !== null;
 * }
 * ```
 */
export interface IdentityCtx {
  auth: Auth;
  meta?: RequestMeta;
  db?: DatabaseReader<any>;
  /** Actions and HTTP routes read through the data functions instead of a database. */
  runQuery?: ActionCtx["runQuery"];
}

/**
 * `userId`, `sessionId` and `subject` of the caller, or null when unauthenticated.
 *
 * @example
 * ```ts
 * import { getAuthUserIdentity } from "service-auth/app";
 * import { query } from "./functions.ts";
 *
 * export const whoAmI = query({
 *   args: {},
 *   handler: async (ctx) => {
 *     const identity = await getAuthUserIdentity(ctx);
 *     return identity && { userId: identity.userId, sessionId: identity.sessionId };
 *   },
 * });
 * ```
 */
export function getAuthUserIdentity(
  ctx: IdentityCtx,
): Promise<{ userId: Id<"user">; sessionId: Id<"session">; subject: string } | null> {
  // A chain, not async/await: each `await` and async function makes promises, and every promise
  // runs async-hook callbacks once Better Auth's AsyncLocalStorage is active (docs/decisions.md 15).
  return identityOf(ctx).then(userIdentityOf);
}

/** `ctx.auth.getUserIdentity()`, a synchronous throw included, as a promise. */
function identityOf(ctx: IdentityCtx): Promise<AuthIdentity | null> {
  try {
    return ctx.auth.getUserIdentity() as Promise<AuthIdentity | null>;
  } catch (error) {
    return Promise.reject(error);
  }
}

function userIdentityOf(
  identity: AuthIdentity | null,
): { userId: Id<"user">; sessionId: Id<"session">; subject: string } | null {
  if (!identity || typeof identity.sessionId !== "string") return null;
  return {
    userId: (identity.userId ?? identity.subject) as Id<"user">,
    sessionId: identity.sessionId as Id<"session">,
    subject: identity.subject,
  };
}

function userIdOf(identity: AuthIdentity | null): Id<"user"> | null {
  return userIdentityOf(identity)?.userId ?? null;
}

/**
 * The caller's user id, or null when unauthenticated.
 *
 * @example
 * ```ts
 * import { getAuthUserId } from "service-auth/app";
 * import { AppError } from "service-auth/server";
 * import { query } from "./functions.ts";
 *
 * export const me = query({
 *   args: {},
 *   handler: async (ctx) => {
 *     const userId = await getAuthUserId(ctx);
 *     if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
 *     return await ctx.db.get("user", userId);
 *   },
 * });
 * ```
 */
export function getAuthUserId(ctx: IdentityCtx): Promise<Id<"user"> | null> {
  return identityOf(ctx).then(userIdOf);
}

/**
 * The session document as requirements §2.2 exposes it.
 *
 * @example
 * ```ts
 * import type { SessionDocument } from "service-auth/app";
 *
 * function activeOrganization(session: SessionDocument | null): string | null {
 *   return session && session.expiresAt > Date.now() ? session.activeOrganizationId : null;
 * }
 * ```
 */
export interface SessionDocument {
  _id: string;
  userId: string;
  expiresAt: number;
  activeOrganizationId: string | null;
  [field: string]: unknown;
}

/**
 * Where `getSession` reads the session document when the ctx has no database.
 *
 * @example
 * ```ts
 * import { type GetSessionOptions, getSession } from "service-auth/app";
 * import { anyApi } from "service-auth/server";
 *
 * // In an action, which has no `ctx.db`: read through the `auth` module's `findOne`.
 * const options: GetSessionOptions = { authFunctions: anyApi.auth };
 * const session = await getSession(ctx, options);
 * ```
 */
export interface GetSessionOptions {
  /** The data functions (e.g. `internal.auth`); `bindAuthData` binds them. */
  authFunctions?: Pick<AuthFunctions, "findOne">;
}

/**
 * The caller's session document, or null. It is read from the database: `ctx.db` in queries and
 * mutations, the `findOne` data function in actions (with `authFunctions`, as `bindAuthData`'s
 * `getSession` passes them). Only without either is it built from the token's claims, which hold
 * no `activeOrganizationId` and may be up to a token lifetime old.
 *
 * @example
 * ```ts
 * import { getSession } from "service-auth/app";
 * import { AppError } from "service-auth/server";
 * import { query } from "./functions.ts";
 *
 * export const session = query({
 *   args: {},
 *   handler: async (ctx) => {
 *     const doc = await getSession(ctx); // from ctx.db; in actions use `authData.getSession(ctx)`
 *     if (!doc) throw new AppError("UNAUTHORIZED", "Sign in first");
 *     return { activeOrganizationId: doc.activeOrganizationId, expiresAt: doc.expiresAt };
 *   },
 * });
 * ```
 */
export async function getSession(
  ctx: IdentityCtx,
  options: GetSessionOptions = {},
): Promise<SessionDocument | null> {
  const identity = (await ctx.auth.getUserIdentity()) as AuthIdentity | null;
  if (!identity || typeof identity.sessionId !== "string") return null;
  const read = ctx.db
    ? () => ctx.db!.get("session", identity.sessionId)
    : ctx.runQuery && options.authFunctions
      ? () =>
          ctx.runQuery!(options.authFunctions!.findOne, {
            model: "session",
            where: [{ field: "_id", value: identity.sessionId }],
          })
      : undefined;
  if (read) {
    const doc = (await read()) as Record<string, unknown> | null;
    if (!doc || !(Number(doc.expiresAt) > Date.now())) return null;
    return {
      ...doc,
      activeOrganizationId: (doc.activeOrganizationId as string | undefined) ?? null,
    } as SessionDocument;
  }
  return {
    _id: identity.sessionId,
    userId: identity.userId,
    expiresAt: identity.sessionExpiresAt,
    activeOrganizationId: (identity.activeOrganizationId as string | undefined) ?? null,
  };
}

/**
 * Headers for calls to external APIs on the caller's behalf: bearer token and client address.
 *
 * @example
 * ```ts
 * import { getHeaders } from "service-auth/app";
 * import { action } from "./functions.ts";
 *
 * // An action calling another service on the caller's behalf.
 * export const orders = action({
 *   args: {},
 *   handler: async (ctx) => {
 *     const headers = await getHeaders(ctx);
 *     const response = await fetch("https://orders.example.com/api/mine", { headers });
 *     return await response.json();
 *   },
 * });
 * ```
 */
export async function getHeaders(ctx: IdentityCtx): Promise<Headers> {
  const headers = new Headers();
  const token = ctx.auth.getToken();
  if (token) headers.set("authorization", `Bearer ${token}`);
  if (ctx.meta?.clientIp) headers.set("x-forwarded-for", ctx.meta.clientIp);
  return headers;
}
