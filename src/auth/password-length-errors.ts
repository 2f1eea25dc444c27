/**
 * Better Auth refuses a short password with "Password too short" and a long one with "Password too
 * long", without the limit, so a person (and every app's sign-up form) has to guess it. This
 * plugin adds the configured limit to the message ("Password too short: use at least 8
 * characters"), on every endpoint that checks it (sign-up, reset, change, set, admin); the status
 * and `code` stay Better Auth's. The number is read from the running configuration, so a form
 * showing the message never drifts from the server's `minPasswordLength`.
 */
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";

/** What the hook reads of the endpoint's context: its answer and Better Auth's length limits. */
interface HookCtx {
  context: {
    returned?: unknown;
    password: { config: { minPasswordLength: number; maxPasswordLength: number } };
  };
}

/** Better Auth's error codes for a password outside the limits. */
const TOO_SHORT = "PASSWORD_TOO_SHORT";
const TOO_LONG = "PASSWORD_TOO_LONG";

/** The plugin; `withAuthDefaults` adds it. */
export function passwordLengthErrors(): BetterAuthPlugin {
  return {
    id: "service-auth-password-length-errors",
    hooks: {
      after: [
        {
          matcher: () => true,
          handler: createAuthMiddleware(async (ctx) => {
            const { returned, password } = (ctx as unknown as HookCtx).context;
            // Read by shape, not class: the endpoint's APIError may come from another copy of better-call.
            if (!(returned instanceof Error)) return;
            const error = returned as Error & { status?: unknown; body?: { code?: unknown } };
            const code = error.body?.code;
            if (code !== TOO_SHORT && code !== TOO_LONG) return;
            const status = (error.status as ConstructorParameters<typeof APIError>[0]) ?? "BAD_REQUEST";
            const { minPasswordLength, maxPasswordLength } = password.config;
            if (code === TOO_SHORT)
              throw new APIError(status, {
                code,
                message: `Password too short: use at least ${minPasswordLength} characters`,
              });
            throw new APIError(status, {
              code,
              message: `Password too long: use at most ${maxPasswordLength} characters`,
            });
          }),
        },
      ],
    },
  };
}
