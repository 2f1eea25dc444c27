/**
 * The auth integration's own error codes. They are sent on Better Auth's routes (`/api/auth/*`)
 * in Better Auth's error shape: thrown as Better Auth's `APIError` (from its hooks and middleware,
 * where only an `APIError` becomes Better Auth's answer), so they never reach a socket. Each
 * throw's status name is checked against these by test/architecture/error-registry.test.ts.
 */
import { defineErrorCodes } from "service-auth/server";

/**
 * The codes `service-auth/auth` sends beyond the platform's, registered with the platform's
 * error registry (a code registered twice is refused at load).
 *
 * @example
 * ```ts
 * const res = await fetch("/api/auth/change-email", { method: "POST", body });
 * if ((await res.json()).code === "SESSION_NOT_FRESH") askToSignInAgain();
 * // AUTH_ERROR_CODES.SESSION_NOT_FRESH.status === 403
 * ```
 */
export const AUTH_ERROR_CODES = defineErrorCodes("service-auth/auth", {
  FIELD_TOO_LONG: {
    status: 400,
    ws: "http-only",
    meaning: "a user field (name, email, image, username) exceeds its length limit",
  },
  INVALID_TOKEN: {
    status: 401,
    ws: "http-only",
    meaning: "a magic-link token that is not one (Better Auth's own code and message)",
  },
  INVALID_CODE: {
    status: 401,
    ws: "http-only",
    meaning: "a two-factor TOTP code used before in its period (Better Auth's own code and message)",
  },
  EMAIL_NOT_VERIFIED: {
    status: 403,
    ws: "http-only",
    meaning: "an invitation is used before the email address is verified",
  },
  SESSION_NOT_FRESH: {
    status: 403,
    ws: "http-only",
    meaning: "a sensitive account change needs a recent sign-in",
  },
  MAIL_UNAVAILABLE: {
    status: 503,
    ws: "http-only",
    meaning: "an auth email (verification, reset, magic link) could not be sent",
  },
});
