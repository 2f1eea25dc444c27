/**
 * The platform's defaults for Better Auth options: logs through the platform logger (redacted,
 * `LOG_LEVEL`), password hashing off the event loop, rate limits by the real client address and
 * length limits on user fields. Apps wrap their options with {@link withAuthDefaults}; anything an
 * app sets itself wins.
 */
import type { BetterAuthOptions } from "better-auth";
import { betterAuthLogger } from "./better-auth-logger.ts";
import { nativePasswordHasher } from "./password.ts";
import { passwordLengthErrors } from "./password-length-errors.ts";
import { prehashedPasswords } from "./password-prehash.ts";
import { CLIENT_IP_HEADER, rateLimitOptions } from "./rate-limit/rules.ts";
import { withUserFieldLimits } from "./schema/user-field-limits.ts";

/**
 * `options` with the platform defaults filled in:
 * - `logger`: {@link betterAuthLogger}, under the app's own `logger` fields (`{ disabled: true }`
 *   still silences it, `{ log }` replaces it);
 * - `emailAndPassword.password`: the native scrypt hasher (same hash format as Better Auth's), unless
 *   the app sets its own `hash` or `verify` (a pair: one is never mixed with the other's algorithm);
 *   either way a sign-up's password is hashed before its transaction (`password-prehash.ts`, one
 *   more plugin), not while it holds the database's write lock;
 * - `rateLimit`: on in every mode with the limits of `AUTH_RATE_LIMITS` (the app's fields win, its
 *   `customRules` add to them), the limited endpoints counted in the app's database (every
 *   instance shares the counts) unless `AUTH_RATE_LIMIT_STORAGE=memory`;
 * - `advanced.ipAddress`: the client address is the one the platform puts in its private header
 *   (the socket's peer, or per `TRUSTED_PROXIES` the forwarded client), unless the app sets its own;
 * - `databaseHooks.user`: length limits on name, email, image and username before the app's hooks.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { withAuthDefaults } from "service-auth/auth";
 *
 * export const createAuth = (ctx: ActionCtx) =>
 *   betterAuth(
 *     withAuthDefaults({
 *       baseURL: siteUrlOf(ctx.env),
 *       database: authData.httpAdapter(ctx),
 *       emailAndPassword: { enabled: true },
 *     }),
 *   );
 * ```
 */
export function withAuthDefaults<O extends BetterAuthOptions>(options: O): O {
  const emailAndPassword = options.emailAndPassword;
  const password = emailAndPassword?.password;
  const ownHasher = password?.hash !== undefined || password?.verify !== undefined;
  const hasher = ownHasher ? password : nativePasswordHasher;
  // Sign-up hashes inside its transaction (the write lock): hash ahead of it instead.
  const prehash = emailAndPassword && hasher?.hash ? prehashedPasswords(hasher.hash) : undefined;
  const out: O = {
    ...options,
    logger: { ...betterAuthLogger(), ...options.logger },
    // The counts' adapter is made from the final options (read at the first count, when `out` is set).
    rateLimit: rateLimitOptions(options.rateLimit, options.database, () => out),
    advanced: {
      ...options.advanced,
      ipAddress: options.advanced?.ipAddress ?? { ipAddressHeaders: [CLIENT_IP_HEADER] },
    },
    databaseHooks: withUserFieldLimits(options.databaseHooks),
    ...(emailAndPassword
      ? {
          emailAndPassword: {
            ...emailAndPassword,
            password: { ...password, ...hasher, ...(prehash ? { hash: prehash.hash } : {}) },
          },
        }
      : {}),
    ...(emailAndPassword
      ? {
          plugins: [...(options.plugins ?? []), ...(prehash ? [prehash.plugin] : []), passwordLengthErrors()],
        }
      : {}),
  };
  return out;
}
