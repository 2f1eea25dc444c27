/**
 * Public server API of the platform (`service-auth/server`): schema, function builders, typed
 * references, errors, and starting a service. The auth integration uses only this entry point.
 * Its exports are a contract (test/package/public-exports.test.ts snapshots them). What only the
 * project's own code needs (the runtime class, `startRuntimeService`, the env store) is no entry
 * point at all: the CLI, tests and benchmarks import those modules by path.
 */

export type { BackoffJitter, BackoffPolicy } from "../protocol/backoff.ts";
export { backoffDelayMs } from "../protocol/backoff.ts";
export type { Backend, BackendEnv, CallOptions } from "./api/backend.ts";
export type { ClusterServiceOptions, RunningService, ServiceOptions } from "./api/service.ts";
export { startService } from "./api/service.ts";
export type { AuthConfig, IdentityResolver } from "./auth/authenticator.ts";
export { identityOfClaims } from "./auth/identity-ctx.ts";
export type { JwtProviderConfig } from "./auth/jwt-verifier.ts";
export { rateLimitKey } from "./client-address.ts";
export type { RunningCluster } from "./cluster/primary.ts";
export { workersSetting } from "./cluster/workers-setting.ts";
export type {
  ConnectionFilter,
  ConnectionsReader,
  ConnectionsWriter,
  LiveConnection,
} from "./db/connections.ts";
export type { DatabaseReader, DatabaseWriter } from "./db/database.ts";
export type { IndexRangeBuilder, PaginationOptions, PaginationResult, Query } from "./db/query.ts";
export type { ErrorCode, ErrorCodeSpec, WsDelivery } from "./errors.ts";
export {
  AppError,
  clientErrorOf,
  defineErrorCodes,
  isAppError,
  isUnavailableError,
  ValidationError,
} from "./errors.ts";
export type { Migration, MigrationPatch } from "./evolution/migration.ts";
export { defineMigration } from "./evolution/migration.ts";
export type { SchemaCheckMode } from "./evolution/startup-check.ts";
export { schemaCheckSetting } from "./evolution/startup-check.ts";
export type { FieldViolation } from "./evolution/stored-check.ts";
export { SchemaCheckRefusal } from "./evolution/stored-check.ts";
export { exitOnSignals } from "./exit-on-signals.ts";
export type {
  ActionCtx,
  Auth,
  EnvReader,
  FunctionBuilders,
  HttpAction,
  MutationCtx,
  QueryCtx,
  RequestMeta,
  UserIdentity,
} from "./functions/define.ts";
export { customMutation, functionsFor } from "./functions/define.ts";
export type { ApiOf, FunctionReference, InternalApiOf } from "./functions/references.ts";
export { anyApi } from "./functions/references.ts";
export type { RegisteredFunction } from "./functions/registered.ts";
export type { Change, Trigger } from "./functions/triggers.ts";
export { Triggers } from "./functions/triggers.ts";
export type { HttpRoutes } from "./http/app.ts";
export { bearerToken } from "./http/bearer-token.ts";
export { PortRefusal } from "./http/listen-error.ts";
export { logger } from "./logger.ts";
export type { MetricsOptions } from "./metrics/endpoint.ts";
export { metricsSetting } from "./metrics/endpoint.ts";
export type { AuthRouteOutcome } from "./metrics/metrics.ts";
export { countAuthOutcome, watchQueue } from "./metrics/metrics.ts";
export type { CronJobs, IntervalSpec } from "./scheduler/crons.ts";
export { cronJobs } from "./scheduler/crons.ts";
export type { ScheduledJobsFilter, ScheduledJobsReader, ScheduledJobView } from "./scheduler/jobs-reader.ts";
export type { SchedulerOptions } from "./scheduler/runner.ts";
export type { Scheduler } from "./scheduler/schedule.ts";
export type { JobState } from "./scheduler/tables.ts";
export type { DataModelOf, DocOf, EdgeDefinition, GenericDataModel, SchemaDefinition } from "./schema.ts";
export { defineEnt, defineEntSchema, defineSchema, defineTable, TableDefinition } from "./schema.ts";
export type { SettingProblem } from "./settings/problems.ts";
export { SettingError, SettingsCheck, SettingsRefusal, settingProblem } from "./settings/problems.ts";
export type { ServiceSettings } from "./settings/service-settings.ts";
export { readServiceSettings } from "./settings/service-settings.ts";
export { StartRefusal } from "./start-refusal.ts";
export { DatabaseOpenError } from "./storage/db-errors.ts";
export { compareValues } from "./storage/indexes/key.ts";
export { DatabaseConnectError } from "./storage/postgres/connect-error.ts";
export { traceHttpRoute } from "./tracing/tracing.ts";
export type { Id, Infer } from "./values/validators.ts";
export { v } from "./values/validators.ts";
