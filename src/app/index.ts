/**
 * `service-auth/app`: the product. An app is one definition (`defineApp`) that
 * `service-auth start` serves with every setting, check and default the README promises.
 *
 * One of the four entry points an app's code imports (docs/app-guide.md, "Entry points"): this
 * one for the app definition and the auth helpers app code calls, `service-auth/server` for
 * functions and schema, `service-auth/client` and one UI binding for the browser. The auth
 * helpers are re-exported from `service-auth/auth` (the entry for embedding Better Auth in a
 * server of your own): the same functions and types, not copies.
 */
// requirements §4.1: the MessageChannel stand-in loads before anything that handles HTTP.
import "../auth/message-channel-polyfill.ts";

// The auth helpers app code calls (in functions, routes and the admin console).
export type {
  AdminFunctionsOptions,
  AdminKeyRow,
  AdminSessionRow,
  AdminUserRow,
  AdminViewer,
  AuditEventType,
  AuditEventView,
  AuditFilter,
  AuditInput,
  CreateAuth,
  GetSessionOptions,
  HttpEnv,
  IdentityCtx,
  SessionDocument,
} from "../auth/index.ts";
export {
  AUDIT_EVENT_TYPES,
  createAdminFunctions,
  freshSessionFor,
  getAuthUserId,
  getAuthUserIdentity,
  getHeaders,
  getSession,
  hasRole,
  JWKS_VAR,
  recordAuditEvent,
  requireAdmin,
  siteUrlOf,
} from "../auth/index.ts";
export type { AppAuthOptions, AuthDefaultSwitches, AuthDefinition, AuthOptionsContext } from "./auth.ts";
export { authTables, defineAuth } from "./auth.ts";
export { browserScript } from "./browser-script.ts";
export type { AppDefinition, AppInput } from "./define-app.ts";
export { defineApp } from "./define-app.ts";
export type { StartAppOptions } from "./start-app.ts";
export { startApp } from "./start-app.ts";
