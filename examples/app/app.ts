/** The example application as the server and the CLI load it: schema, modules, auth, HTTP routes. */
import {
  auditCommand,
  auditEnvChanges,
  auditRetentionCrons,
  authCommand,
  authConfig,
  authHousekeepingCrons,
  ensureAuthEnv,
  runAsUser,
} from "service-auth/auth";
import { type ApiOf, anyApi, cronJobs, type InternalApiOf, type ServiceOptions } from "service-auth/server";
import * as admin from "./admin.ts";
import * as audit from "./audit.ts";
import * as auth from "./auth.ts";
import http from "./http.ts";
import * as mail from "./mail.ts";
import * as messages from "./messages.ts";
import * as migrations from "./migrations.ts";
import * as profiles from "./profiles.ts";
import schema from "./schema.ts";
import * as users from "./users.ts";

export const modules = { admin, audit, auth, mail, messages, profiles, users };

/** Typed references to the public functions, e.g. `api.messages.send`. */
export const api: ApiOf<typeof modules> = anyApi;
/** Typed references to the internal functions, e.g. `internal.users.setRole`. */
export const internal: InternalApiOf<typeof modules> = anyApi;

export const app: ServiceOptions = {
  schema,
  modules,
  auth: (env) => authConfig(env),
  routes: http,
  migrations,
  runAs: runAsUser(auth.createAuth),
  onAuthSync: (backend) => ensureAuthEnv(backend, internal.auth.getLatestJwks),
  // Housekeeping, each run once per tick across every instance and worker: expired sessions and
  // verification rows deleted every 10 minutes; audit events older than AUDIT_RETENTION_DAYS
  // (default 90) every hour.
  crons: auditRetentionCrons(
    authHousekeepingCrons(cronJobs(), internal.auth.deleteExpired),
    internal.audit.sweep,
  ),
  // `env set|remove|sync` from the CLI lands in the audit trail (names only).
  onEnvChange: auditEnvChanges(internal.audit.record),
};

/**
 * CLI commands of this app: `npm run cli -- auth generate [FILE]` prints the auth tables;
 * `npm run cli -- audit [--since 1h] [--user EMAIL] [--type TYPE]` prints audit events as JSON lines.
 */
export const commands = {
  auth: authCommand(auth.authSchemaOptions, { user: { indexes: { username: ["username"] } } }),
  audit: auditCommand(internal.audit.list),
};
