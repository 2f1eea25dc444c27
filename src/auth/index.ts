/**
 * Public entry `service-auth/auth`: Better Auth on the platform's own tables (SPEC §1–§8).
 */

export { adapter, httpAdapter } from "./adapter.ts";
export type {
  AdminFunctionsOptions,
  AdminKeyRow,
  AdminSessionRow,
  AdminUserRow,
  AdminViewer,
} from "./admin/functions.ts";
export { createAdminFunctions, hasRole, requireAdmin } from "./admin/functions.ts";
export { AdvisoryRefusal } from "./advisories/refuse.ts";
export { auditCommand, auditEnvChanges, parseTime } from "./audit/cli.ts";
export type { AuditEventType, AuditInput, AuditRow } from "./audit/events.ts";
export { AUDIT_EVENT_TYPES, AUDIT_FIELD_LIMITS, AUDIT_MODEL, auditRow } from "./audit/events.ts";
export { createAuditFunctions, recordAuditEvent } from "./audit/functions.ts";
export { AUDIT_SCHEMA, auditTrail } from "./audit/plugin.ts";
export type { AuditEventView, AuditFilter } from "./audit/query.ts";
export {
  AUDIT_RETENTION_VAR,
  auditRetention,
  auditRetentionDays,
  DEFAULT_AUDIT_RETENTION_DAYS,
  sweepAuditEvents,
} from "./audit/retention.ts";
export type { BetterAuthLogger } from "./better-auth-logger.ts";
export { betterAuthLogger } from "./better-auth-logger.ts";
export type { AppCommand, CommandIo } from "./cli.ts";
export { authCommand } from "./cli.ts";
export type { ClientOptions } from "./client.ts";
export { createClient } from "./client.ts";
export { AUDIENCE, authConfig, getAuthConfigProvider, siteOriginOf, siteUrlOf } from "./config.ts";
export type { AuthTriggers, ModelTriggers } from "./data/types.ts";
export type { AuthFunctions, CreateApiOptions } from "./data-functions.ts";
export { createApi } from "./data-functions.ts";
export { withAuthDefaults } from "./defaults.ts";
export {
  AUTH_ENV_COMMAND,
  AUTH_SECRET_VAR,
  authEnvProblems,
  checkAuthStarts,
  ensureAuthEnv,
  JWKS_VAR,
  missingAuthEnv,
} from "./env.ts";
export { freshSessionFor, SENSITIVE_PATHS } from "./fresh-session.ts";
export type { GetSessionOptions, IdentityCtx, SessionDocument } from "./helpers.ts";
export { getAuthUserId, getAuthUserIdentity, getHeaders, getSession } from "./helpers.ts";
export type { CleanupOptions, CleanupResult } from "./housekeeping.ts";
export { authHousekeepingCrons, CLEANUP_CRON, expiredRowsCleanup } from "./housekeeping.ts";
export type { AuthHandler, CreateAuth, HttpEnv } from "./http.ts";
export { authHttpRouter, authMiddleware, corsRule } from "./http.ts";
export type { AuthIdentity } from "./identity.ts";
export { resolveIdentity } from "./identity.ts";
export { keyFunctions } from "./key-functions.ts";
export type { StoredJwk } from "./keys.ts";
export { parseStoredJwks, publicJwksOf, serializeJwks } from "./keys.ts";
export * from "./mail/index.ts";
export { installMessageChannelPolyfill } from "./message-channel-polyfill.ts";
export { hashPassword, nativePasswordHasher, verifyPassword } from "./password.ts";
export type { DefinePayload, PayloadInput } from "./plugin/claims.ts";
export { defaultPayload, payloadWithRequiredClaims } from "./plugin/claims.ts";
export type { BackendPluginOptions } from "./plugin/index.ts";
export { BANNED_MESSAGE, backend, isBanned } from "./plugin/index.ts";
export type { RunAsSession, SessionMintingAuth } from "./run-as.ts";
export { runAsUser } from "./run-as.ts";
export * from "./schema.ts";
export { authTablesSource, validatorSource } from "./schema-source.ts";
