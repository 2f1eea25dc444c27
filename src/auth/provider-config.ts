/**
 * The platform auth config (requirements §4.3): one JWT provider built from the static key set (`JWKS`),
 * or from the key-set endpoint when `JWKS` is unset, plus the step-2 identity resolver.
 */
import type { AuthConfig, EnvReader, JwtProviderConfig } from "service-auth/server";
import { resolveIdentity } from "./identity.ts";
import { DEFAULT_ALG, publicJwksOf } from "./keys/stored-jwks.ts";
import { DEFAULT_BASE_PATH } from "./plugins/backend/options.ts";

/** Shortest time between two fetches of this server's key set for tokens of unknown keys. */
const OWN_JWKS_REFETCH_MS = 1_000;

/** `aud` of every backend token. */
export const AUDIENCE = "backend";

export interface AuthConfigOptions {
  basePath?: string;
}

/**
 * The site URL tokens are issued by (`iss`): `SITE_URL`, falling back to the local development
 * address `http://localhost:$PORT` (port 3000 by default).
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { siteUrlOf } from "service-auth/auth";
 *
 * // SITE_URL, or http://localhost:$PORT in development.
 * const auth = betterAuth({
 *   baseURL: siteUrlOf(ctx.env),
 *   basePath: "/api/auth",
 *   database: authData.httpAdapter(ctx),
 * });
 * ```
 */
export function siteUrlOf(env: EnvReader): string {
  const url = env.get("SITE_URL") ?? `http://localhost:${env.get("PORT") ?? 3000}`;
  return url.replace(/\/+$/, "");
}

/**
 * The JWT provider: static keys from `JWKS` (no network, recommended) or, without `JWKS`, the
 * key set fetched from `{SITE_URL}{basePath}/backend/jwks` and cached.
 */
export function getAuthConfigProvider(env: EnvReader, options: AuthConfigOptions = {}): JwtProviderConfig {
  const issuer = siteUrlOf(env);
  const base = { issuer, audience: AUDIENCE, algorithms: [DEFAULT_ALG] };
  if (env.get("JWKS")) {
    return {
      ...base,
      getJwks: () => {
        const jwks = env.get("JWKS");
        return jwks ? publicJwksOf(jwks) : undefined;
      },
    };
  }
  // This server's own key set: a graceful rotation signs with the new key at once, so a token of
  // an unknown key waits for a refetch (one a second at most, whatever key ids tokens make up)
  // rather than the 30 s a third-party issuer, which publishes keys before using them, gets.
  return {
    ...base,
    jwksUrl: `${issuer}${options.basePath ?? DEFAULT_BASE_PATH}/backend/jwks`,
    minRefetchIntervalMs: OWN_JWKS_REFETCH_MS,
    awaitRefetch: true,
  };
}

/**
 * The platform auth config to pass as `auth` when starting the service.
 *
 * @example
 * ```ts
 * // app.ts: the platform checks backend tokens against the auth's issuer and keys.
 * import { authConfig } from "service-auth/auth";
 *
 * export const app: ServiceOptions = {
 *   schema,
 *   modules,
 *   auth: (env) => authConfig(env),
 *   routes: http,
 * };
 * ```
 */
export function authConfig(env: EnvReader, options: AuthConfigOptions = {}): AuthConfig {
  return { providers: [getAuthConfigProvider(env, options)], resolveIdentity };
}
