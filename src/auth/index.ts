/**
 * Public entry `service-auth/auth`: Better Auth on the platform's own tables (requirements §1–§8),
 * for embedding it in a server of your own (`startService` from `service-auth/server` plus the
 * pieces below: tables, adapters, the `backend()` plugin, routes, defaults, mail, audit, CLI
 * commands). An app made with `defineApp` needs none of it: `service-auth/app` re-exports the
 * helpers app code calls. A contract that test/package/public-exports.test.ts snapshots; the
 * integration's own building blocks (token claims, key states, table registry, error-code table,
 * retry waits) stay in their modules, which the project's own code and tests import directly.
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
export { auditCommand, auditEnvChanges } from "./audit/cli.ts";
export type { AuditEventType, AuditInput } from "./audit/events.ts";
export { AUDIT_EVENT_TYPES } from "./audit/events.ts";
export type { AuditFunctionRefs } from "./audit/functions.ts";
export { createAuditFunctions, recordAuditEvent } from "./audit/functions.ts";
export { auditTrail } from "./audit/plugin.ts";
export type { AuditEventView, AuditFilter } from "./audit/query.ts";
export type { AuditSweepResult } from "./audit/retention.ts";
export { auditRetentionCrons } from "./audit/retention.ts";
export type { AuthDataOptions } from "./bind-auth-data.ts";
export { bindAuthData } from "./bind-auth-data.ts";
export type { AppCommand, CommandIo } from "./cli.ts";
export { authCommand } from "./cli.ts";
export type { GetSessionOptions, IdentityCtx, SessionDocument } from "./current-user.ts";
export { getAuthUserId, getAuthUserIdentity, getHeaders, getSession } from "./current-user.ts";
export type { AuthFunctions } from "./data/functions.ts";
export type { AuthTriggers, ModelTriggers } from "./data/types.ts";
export { freshSessionFor } from "./fresh-session.ts";
export type { CleanupOptions, CleanupResult } from "./housekeeping.ts";
export { authHousekeepingCrons, expiredRowsCleanup } from "./housekeeping.ts";
export type { AuthHandler, CreateAuth, HttpEnv } from "./http.ts";
export { authHttpRouter, authMiddleware, corsRule } from "./http.ts";
export {
  AUTH_SECRET_VAR,
  authEnvProblems,
  checkAuthStarts,
  ensureAuthEnv,
  JWKS_VAR,
} from "./keys/auth-env.ts";
export type {
  AuthEmails,
  MailMessage,
  MailOutboxRefs,
  MailRetryOptions,
  MailSender,
  MailSettingsOptions,
  SmtpSettings,
} from "./mail/index.ts";
export {
  authEmails,
  devOutbox,
  MAIL_FROM_VAR,
  MailSettingsError,
  mailOutbox,
  mailOutboxFunctions,
  mailSenderOf,
  mailSettingsProblems,
  SMTP_URL_VAR,
  smtpSender,
} from "./mail/index.ts";
export { nativePasswordHasher } from "./password.ts";
export type { DefinePayload, PayloadInput } from "./plugins/backend/claims.ts";
export { defaultPayload } from "./plugins/backend/claims.ts";
export type { BackendPluginOptions } from "./plugins/backend/index.ts";
export { backend } from "./plugins/backend/index.ts";
export { authConfig, siteUrlOf } from "./provider-config.ts";
export type { RunAsSession, SessionMintingAuth } from "./run-as.ts";
export { runAsUser } from "./run-as.ts";
export type {
  AuthExtensions,
  AuthSchemaOptions,
  AuthTableExtension,
  AuthTableInfo,
  AuthTableName,
  AuthTablesFor,
  ExtendedAuthTables,
} from "./schema/auth-schema.ts";
export {
  AUTH_TABLE_NAMES,
  authEntSchema,
  authEnts,
  defineAuthEnts,
  defineAuthTables,
  markAuthTable,
} from "./schema/auth-schema.ts";
export { originSettingsProblems, TRUSTED_ORIGINS_VAR, trustedOriginsOf } from "./site-origins.ts";
export { withAuthDefaults } from "./with-auth-defaults.ts";
