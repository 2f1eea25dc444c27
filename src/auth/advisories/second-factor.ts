/**
 * No backend JWT before the second factor (the risk of `@convex-dev/better-auth`'s
 * GHSA-4qvm-r4pr-v3wg): on a first-factor sign-in of a user with two-factor enabled, Better Auth's
 * `twoFactor` plugin replaces the fresh session by a pending second factor, but a JWT minted for
 * that session by an earlier after-hook would still leave the response. The `backend` plugin asks
 * this module before minting.
 */

/** The first-factor sign-in paths the `twoFactor` plugin intercepts (Better Auth 1.4.9). */
const FIRST_FACTOR_PATHS: ReadonlySet<string> = new Set([
  "/sign-in/email",
  "/sign-in/username",
  "/sign-in/phone-number",
]);

/** What the check reads of an after-hook's endpoint context. */
export interface SecondFactorCtx {
  path?: string;
  context: {
    options: { plugins?: readonly { id: string }[] };
    newSession?: { user?: Readonly<Record<string, unknown>> } | null;
  };
}

/**
 * True when the request is the password step of a two-factor sign-in: the session it made is not
 * the user's yet, so no JWT may be minted for it. A trusted device gets its token on the next
 * `get-session` / `backend/token`, from the session the `twoFactor` plugin kept.
 */
export function awaitsSecondFactor(ctx: SecondFactorCtx): boolean {
  if (!FIRST_FACTOR_PATHS.has(ctx.path ?? "")) return false;
  if (!ctx.context.options.plugins?.some((p) => p.id === "two-factor")) return false;
  return ctx.context.newSession?.user?.twoFactorEnabled === true;
}
