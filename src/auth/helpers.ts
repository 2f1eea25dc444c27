/**
 * Identity helpers of SPEC §4.2 for any function ctx (query, mutation, action, HTTP action).
 * They read what step 2 already established; `getSession` reads the session document when the
 * ctx has a database.
 */
import type { Auth, DatabaseReader, RequestMeta } from "service-auth/server";
import type { Id } from "service-auth/values";
import type { AuthIdentity } from "./identity.ts";

/** The minimum a ctx needs for the helpers. */
export interface IdentityCtx {
  auth: Auth;
  meta?: RequestMeta;
  db?: DatabaseReader<any>;
}

/** `userId`, `sessionId` and `subject` of the caller, or null when unauthenticated. */
export async function getAuthUserIdentity(
  ctx: IdentityCtx,
): Promise<{ userId: Id<"user">; sessionId: Id<"session">; subject: string } | null> {
  const identity = (await ctx.auth.getUserIdentity()) as AuthIdentity | null;
  if (!identity || typeof identity.sessionId !== "string") return null;
  return {
    userId: (identity.userId ?? identity.subject) as Id<"user">,
    sessionId: identity.sessionId as Id<"session">,
    subject: identity.subject,
  };
}

/** The caller's user id, or null when unauthenticated. */
export async function getAuthUserId(ctx: IdentityCtx): Promise<Id<"user"> | null> {
  return (await getAuthUserIdentity(ctx))?.userId ?? null;
}

/** The session document as SPEC §2.2 exposes it. */
export interface SessionDocument {
  _id: string;
  userId: string;
  expiresAt: number;
  activeOrganizationId: string | null;
  [field: string]: unknown;
}

/** The caller's session document, or null. Without a database (actions) it is built from the identity. */
export async function getSession(ctx: IdentityCtx): Promise<SessionDocument | null> {
  const identity = (await ctx.auth.getUserIdentity()) as AuthIdentity | null;
  if (!identity || typeof identity.sessionId !== "string") return null;
  if (ctx.db) {
    const doc = await ctx.db.get("session", identity.sessionId);
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

/** Headers for calls to external APIs on the caller's behalf: bearer token and client address. */
export async function getHeaders(ctx: IdentityCtx): Promise<Headers> {
  const headers = new Headers();
  const token = ctx.auth.getToken();
  if (token) headers.set("authorization", `Bearer ${token}`);
  if (ctx.meta?.clientIp) headers.set("x-forwarded-for", ctx.meta.clientIp);
  return headers;
}
