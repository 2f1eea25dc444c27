/**
 * Step 2 of every authenticated request (requirements §1.2): the token's session must exist and be
 * unexpired, and its user must not be banned. The session record, not the JWT, decides access.
 */
import { AppError, type IdentityResolver, identityOfClaims, type UserIdentity } from "service-auth/server";

/**
 * True for a user whose ban is in force (`banned` set, `banExpires` absent or in the future). The
 * rule of step 2 below; the `backend` plugin applies it too, so a banned user gets no new JWT.
 */
export function isBanned(user: { banned?: unknown; banExpires?: unknown }): boolean {
  if (!user.banned) return false;
  if (user.banExpires == null) return true;
  const expires = user.banExpires instanceof Date ? user.banExpires.getTime() : Number(user.banExpires);
  return !(expires <= Date.now());
}

/** What a banned user is told, by step 2 (`ACCOUNT_BANNED`) and by the plugin's token endpoint. */
export const BANNED_MESSAGE = "This account is banned. Contact support if you believe this is an error.";

/** The identity functions see; `subject` and `userId` are the user id. */
export interface AuthIdentity extends UserIdentity {
  userId: string;
  sessionId: string;
  /** ms since epoch; a live connection ends its identity at this time. */
  sessionExpiresAt: number;
}

/**
 * A step 2 refusal; `reason` (not shown to clients: `UNAUTHORIZED` answers carry no data) names
 * it for the platform's metrics.
 */
const unauthorized = (message: string, reason?: "SESSION_MISSING" | "SESSION_EXPIRED" | "USER_MISSING") =>
  new AppError("UNAUTHORIZED", message, reason ? { data: { reason } } : undefined);

/**
 * Resolves verified claims against the `user` and `session` tables. The user is read first so a
 * banned user gets 403 even after the ban deleted their sessions.
 */
export const resolveIdentity: IdentityResolver = async (claims, ctx): Promise<AuthIdentity> => {
  const userId = claims.sub;
  const sessionId = claims.sessionId;
  if (typeof userId !== "string" || typeof sessionId !== "string") {
    throw unauthorized("Token lacks sub or sessionId");
  }
  const user = await ctx.db.get("user", userId);
  if (!user) throw unauthorized("User not found", "USER_MISSING");
  if (isBanned(user as { banned?: unknown; banExpires?: unknown }))
    throw new AppError("ACCOUNT_BANNED", BANNED_MESSAGE);
  const session = await ctx.db.get("session", sessionId);
  if (!session || session.userId !== userId) throw unauthorized("Session not found", "SESSION_MISSING");
  const expiresAt = Number(session.expiresAt);
  if (!(expiresAt > Date.now())) throw unauthorized("Session expired", "SESSION_EXPIRED");
  // The platform's `{ ...claims, subject, issuer, tokenIdentifier }` without a spread (see
  // identityOfClaims), then ours: same keys, same order (`sessionId` keeps its place).
  const identity = identityOfClaims(claims) as AuthIdentity;
  identity.tokenIdentifier = `${identity.issuer}|${userId}|${sessionId}`;
  identity.userId = userId;
  identity.sessionId = sessionId;
  identity.sessionExpiresAt = expiresAt;
  return identity;
};
