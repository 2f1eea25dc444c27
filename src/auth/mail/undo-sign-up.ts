/**
 * A sign-up whose verification email could not be sent, undone after the fact. Better Auth 1.7
 * sends that email after the sign-up's transaction commits and only logs a failure, so the user,
 * account and session are already kept and the answer is 200 with the session cookie. The auth
 * middleware then deletes them (Better Auth's `deleteUser`: sessions, accounts, the user; one
 * transaction) and answers 503 `MAIL_UNAVAILABLE` without cookies, as 1.4.9's rollback does.
 */
import { type ActionCtx, AppError, logger } from "service-auth/server";
import { AUTH_ERROR_CODES } from "../error-codes.ts";

/** The part of a Better Auth instance this uses. */
export interface UserDeletingAuth {
  $context: Promise<{ internalAdapter: { deleteUser(userId: string): Promise<unknown> } }>;
}

/** The answer of a sign-up whose verification email was not sent (no `Set-Cookie`). */
export function mailUnavailableResponse(): Response {
  const { MAIL_UNAVAILABLE } = AUTH_ERROR_CODES; // registered (503) before the error is made
  const error = new AppError("MAIL_UNAVAILABLE", "The email could not be sent; try again later", {
    status: MAIL_UNAVAILABLE.status,
  });
  return new Response(JSON.stringify({ code: error.code, message: error.message }), {
    status: error.status,
    headers: { "content-type": "application/json" },
  });
}

/** Deletes the user `signedUp` (Better Auth's sign-up answer) made; answers 503 `MAIL_UNAVAILABLE`. */
export async function undoSignUp(
  auth: UserDeletingAuth,
  ctx: ActionCtx,
  signedUp: Response,
): Promise<Response> {
  const body = (await signedUp.json().catch(() => undefined)) as { user?: { id?: unknown } } | undefined;
  const userId = body?.user?.id;
  if (typeof userId !== "string") {
    // A sign-up answer without the user (an app's own hooks changed it): nothing to find.
    logger.error("sign-up kept although its verification email was not sent: no user id in the answer");
    return mailUnavailableResponse();
  }
  try {
    const { internalAdapter } = await auth.$context;
    await ctx.runInTransaction(() => internalAdapter.deleteUser(userId));
  } catch (error) {
    // Still the typed 503: the sign-up did not complete; the log says the user was kept.
    logger.error("sign-up kept although its verification email was not sent: deleting the user failed", {
      reason: error instanceof Error ? error.message : String(error),
    });
  }
  return mailUnavailableResponse();
}
