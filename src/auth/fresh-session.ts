/**
 * Sensitive operations behind Better Auth's fresh-session middleware (requirements §5.4): the listed
 * endpoints answer 403 `SESSION_NOT_FRESH` unless the caller's session was created or refreshed
 * within `session.freshAge` seconds (Better Auth's default: one day; `0` turns the check off).
 * On 1.4.9 `/change-password` and `/delete-user` only check that the session exists
 * (`sensitiveSessionMiddleware`) and `/admin/set-role` only the role.
 */
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware, freshSessionMiddleware } from "better-auth/api";

/** The sensitive endpoints of the example app: password change, account deletion, role change. */
export const SENSITIVE_PATHS = ["/change-password", "/delete-user", "/admin/set-role"] as const;

/**
 * A Better Auth plugin running `freshSessionMiddleware` before each endpoint in `paths` (paths under `basePath`).
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { freshSessionFor } from "service-auth/app";
 *
 * const auth = betterAuth({
 *   session: { freshAge: 60 * 60 * 24 }, // a day
 *   plugins: [
 *     freshSessionFor(), // change password, delete account, set role
 *     // or other paths: freshSessionFor(["/change-email", "/delete-user"])
 *   ],
 * });
 * ```
 */
export function freshSessionFor(paths: readonly string[] = SENSITIVE_PATHS): BetterAuthPlugin {
  const guarded = new Set(paths);
  return {
    id: "fresh-session",
    hooks: {
      before: [
        {
          matcher: (ctx) => guarded.has(ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            try {
              await freshSessionMiddleware(ctx);
            } catch (error) {
              // Better Auth says "Session is not fresh" without a code; clients need one to prompt a new sign-in.
              if (error instanceof APIError && error.status === "FORBIDDEN") {
                throw new APIError("FORBIDDEN", {
                  message: "Sign in again to do this: the session is not fresh",
                  code: "SESSION_NOT_FRESH",
                });
              }
              throw error;
            }
          }),
        },
      ],
    },
  };
}
