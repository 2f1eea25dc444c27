import type { AuthConfig } from "service-auth/server";
import type { AcceptedAdvisories } from "../../advisories/catalog.ts";
import type { DefinePayload } from "./claims.ts";

/**
 * Options of the `backend` Better Auth plugin (requirements §4.3 "Plugin options").
 *
 * @example
 * ```ts
 * import { type BackendPluginOptions, authConfig, backend } from "service-auth/auth";
 *
 * const options: BackendPluginOptions = {
 *   authConfig: authConfig(env),
 *   jwks: env.get("JWKS"),
 *   jwt: { expirationSeconds: 600 },
 *   acceptAdvisories: env.get("SERVICE_AUTH_ACCEPT_ADVISORIES"),
 * };
 * const plugin = backend(options);
 * ```
 */
export interface BackendPluginOptions {
  /** The platform auth config; its first provider's issuer and audience go into every token. */
  authConfig: AuthConfig;
  jwt?: {
    /** Token lifetime in seconds (default 900). */
    expirationSeconds?: number;
    /** Claims of a token; `sessionId` and `iat` are added when absent. */
    definePayload?: DefinePayload;
  };
  /** Static key set (the `JWKS` variable): no key generation, no database read when signing. */
  jwks?: string;
  options?: {
    /** Route prefix of the auth endpoints (default `/api/auth`); must match Better Auth's `basePath`. */
    basePath?: string;
  };
  /** Advisory ids whose risk the app accepts (docs/security.md), e.g. `env.get("SERVICE_AUTH_ACCEPT_ADVISORIES")`. */
  acceptAdvisories?: AcceptedAdvisories;
}

export const DEFAULT_BASE_PATH = "/api/auth";
export const DEFAULT_EXPIRATION_SECONDS = 900;
/** Cookie `service-auth.jwt` comes from Better Auth's cookie prefix plus this name. */
export const JWT_COOKIE_NAME = "jwt";
export const COOKIE_PREFIX = "service-auth";
