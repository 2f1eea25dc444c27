/**
 * Public entry `service-auth/auth`: Better Auth on the platform's own tables (SPEC §1–§8).
 */
export * from "./schema.ts";
export { backend, isBanned, BANNED_MESSAGE } from "./plugin/index.ts";
export type { BackendPluginOptions } from "./plugin/index.ts";
export { defaultPayload, payloadWithRequiredClaims } from "./plugin/claims.ts";
export type { DefinePayload, PayloadInput } from "./plugin/claims.ts";
export { authConfig, getAuthConfigProvider, siteOriginOf, siteUrlOf, AUDIENCE } from "./config.ts";
export { resolveIdentity } from "./identity.ts";
export type { AuthIdentity } from "./identity.ts";
export { getAuthUserIdentity, getAuthUserId, getSession, getHeaders } from "./helpers.ts";
export type { SessionDocument, IdentityCtx } from "./helpers.ts";
export { authMiddleware, authHttpRouter, corsRule } from "./http.ts";
export type { CreateAuth, HttpEnv, AuthHandler } from "./http.ts";
export { keyFunctions } from "./key-functions.ts";
export { ensureAuthEnv, missingAuthEnv, AUTH_ENV_COMMAND, AUTH_SECRET_VAR, JWKS_VAR } from "./env.ts";
export { parseStoredJwks, publicJwksOf, serializeJwks } from "./keys.ts";
export type { StoredJwk } from "./keys.ts";
export { installMessageChannelPolyfill } from "./message-channel-polyfill.ts";
export { createClient } from "./client.ts";
export type { ClientOptions } from "./client.ts";
export { adapter, httpAdapter } from "./adapter.ts";
export { createApi } from "./data-functions.ts";
export type { AuthFunctions, AuthTriggers, ModelTriggers, CreateApiOptions } from "./data-functions.ts";
