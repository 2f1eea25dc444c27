/**
 * The platform's defaults for Better Auth options: logs through the platform logger (redacted,
 * `LOG_LEVEL`) and password hashing off the event loop. Apps wrap their options with
 * {@link withAuthDefaults}; anything an app sets itself wins.
 */
import type { BetterAuthOptions } from "better-auth";
import { betterAuthLogger } from "./better-auth-logger.ts";
import { nativePasswordHasher } from "./password.ts";

/**
 * `options` with the platform defaults filled in:
 * - `logger`: {@link betterAuthLogger}, under the app's own `logger` fields (`{ disabled: true }`
 *   still silences it, `{ log }` replaces it);
 * - `emailAndPassword.password`: the native scrypt hasher (same hash format as Better Auth's), unless
 *   the app sets its own `hash` or `verify` (a pair: one is never mixed with the other's algorithm).
 */
export function withAuthDefaults<O extends BetterAuthOptions>(options: O): O {
  const emailAndPassword = options.emailAndPassword;
  const password = emailAndPassword?.password;
  const ownHasher = password?.hash !== undefined || password?.verify !== undefined;
  return {
    ...options,
    logger: { ...betterAuthLogger(), ...options.logger },
    ...(emailAndPassword && !ownHasher
      ? { emailAndPassword: { ...emailAndPassword, password: { ...password, ...nativePasswordHasher } } }
      : {}),
  };
}
