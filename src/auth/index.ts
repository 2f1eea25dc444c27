/**
 * Public entry `service-auth/auth`: Better Auth on the platform's own tables (requirements §1–§8).
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
export type { AuditFunctionRefs } from "./audit/functions.ts";
export { createAuditFunctions, recordAuditEvent } from "./audit/functions.ts";
export { AUDIT_SCHEMA, auditTrail } from "./audit/plugin.ts";
export type { AuditEventView, AuditFilter } from "./audit/query.ts";
export type { AuditSweepResult } from "./audit/retention.ts";
export {
  AUDIT_RETENTION_CRON,
  AUDIT_RETENTION_VAR,
  auditRetentionCrons,
  auditRetentionDays,
  DEFAULT_AUDIT_RETENTION_DAYS,
} from "./audit/retention.ts";
export type { BetterAuthLogger } from "./better-auth-logger.ts";
export { betterAuthLogger } from "./better-auth-logger.ts";
export type { AppCommand, CommandIo } from "./cli.ts";
export { authCommand } from "./cli.ts";
export type { ClientOptions } from "./client.ts";
export { createClient } from "./client.ts";
export type { GetSessionOptions, IdentityCtx, SessionDocument } from "./current-user.ts";
export { getAuthUserId, getAuthUserIdentity, getHeaders, getSession } from "./current-user.ts";
export type { AuthFunctions, CreateApiOptions } from "./data/functions.ts";
export { createApi } from "./data/functions.ts";
export type { AuthTriggers, ModelTriggers } from "./data/types.ts";
export { freshSessionFor, SENSITIVE_PATHS } from "./fresh-session.ts";
export type { CleanupOptions, CleanupResult } from "./housekeeping.ts";
export { authHousekeepingCrons, CLEANUP_CRON, expiredRowsCleanup } from "./housekeeping.ts";
export type { AuthHandler, CreateAuth, HttpEnv } from "./http.ts";
export { authHttpRouter, authMiddleware, corsRule } from "./http.ts";
export type { AuthIdentity } from "./identity.ts";
export { resolveIdentity } from "./identity.ts";
export {
  AUTH_ENV_COMMAND,
  AUTH_SECRET_VAR,
  authEnvProblems,
  checkAuthStarts,
  ensureAuthEnv,
  JWKS_VAR,
  missingAuthEnv,
} from "./keys/auth-env.ts";
export { keyFunctions } from "./keys/functions.ts";
export type { StoredJwk } from "./keys/stored-jwks.ts";
export { isActiveKey, keyStates, parseStoredJwks, publicJwksOf, serializeJwks } from "./keys/stored-jwks.ts";
export * from "./mail/index.ts";
export { installMessageChannelPolyfill } from "./message-channel-polyfill.ts";
export { hashPassword, nativePasswordHasher, verifyPassword } from "./password.ts";
export type { DefinePayload, PayloadInput } from "./plugins/backend/claims.ts";
export { defaultPayload, payloadWithRequiredClaims } from "./plugins/backend/claims.ts";
export type { BackendPluginOptions } from "./plugins/backend/index.ts";
export { BANNED_MESSAGE, backend, isBanned } from "./plugins/backend/index.ts";
export { AUDIENCE, authConfig, getAuthConfigProvider, siteOriginOf, siteUrlOf } from "./provider-config.ts";
export type { RunAsSession, SessionMintingAuth } from "./run-as.ts";
export { runAsUser } from "./run-as.ts";
export * from "./schema/auth-schema.ts";
export { authTablesSource, validatorSource } from "./schema/source.ts";
export { originSettingsProblems, TRUSTED_ORIGINS_VAR, trustedOriginsOf } from "./site-origins.ts";
export { withAuthDefaults } from "./with-auth-defaults.ts";
