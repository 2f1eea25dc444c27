/**
 * The user a two-factor request is for, found as Better Auth's `verifyTwoFactor` finds it (1.4.9
 * and 1.7): the request's session, else the pending sign-in named by the signed two-factor cookie.
 * Read by the used-TOTP check (used-totp.ts) and the audit trail's backup-code reuse (audit/spent-reuse.ts).
 */
import { type createAuthMiddleware, getSessionFromCtx } from "better-auth/api";

/** The two-factor plugin's cookie of a sign-in waiting for its second factor (both lines). */
const TWO_FACTOR_COOKIE = "two_factor";

/** What a hook reads of Better Auth's endpoint context (both lines), loosely typed. */
export type TwoFactorCtx = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

/** The user whose second factor the request presents: the session's, else the pending sign-in's. */
export async function twoFactorUserId(ctx: TwoFactorCtx): Promise<string | undefined> {
  const session = await getSessionFromCtx(ctx).catch(() => null);
  if (session?.user?.id) return session.user.id;
  const cookie = ctx.context.createAuthCookie(TWO_FACTOR_COOKIE);
  const identifier = await ctx.getSignedCookie(cookie.name, ctx.context.secret);
  if (!identifier) return undefined;
  const row = await ctx.context.internalAdapter.findVerificationValue(identifier);
  return typeof row?.value === "string" && row.value !== "" ? row.value : undefined;
}
