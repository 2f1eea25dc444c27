/**
 * Public server API of the platform (`service-auth/server`): schema, function builders, typed
 * references, errors, and starting a service. The auth integration uses only this entry point.
 */
export { defineSchema, defineTable, defineEnt, defineEntSchema, TableDefinition } from "./schema.ts";
export type { DataModelOf, DocOf, GenericDataModel, SchemaDefinition, EdgeDefinition } from "./schema.ts";
export { functionsFor, customMutation, isRegisteredFunction } from "./functions/define.ts";
export { Triggers } from "./functions/triggers.ts";
export type { Change, Trigger } from "./functions/triggers.ts";
export type {
  ActionCtx,
  Auth,
  EnvReader,
  FunctionBuilders,
  HttpAction,
  MutationCtx,
  QueryCtx,
  RegisteredFunction,
  RequestMeta,
  UserIdentity,
} from "./functions/define.ts";
export { anyApi, functionPath, makeReference } from "./functions/references.ts";
export type { ApiOf, FunctionReference, InternalApiOf } from "./functions/references.ts";
export type { DatabaseReader, DatabaseWriter } from "./db/database.ts";
export type { Query, IndexRangeBuilder, PaginationOptions, PaginationResult } from "./db/query.ts";
export { ServiceError, AppError, ValidationError, isServiceError } from "./errors.ts";
export type { ErrorCode } from "./errors.ts";
export { Backend } from "./runtime.ts";
export type { AuthConfig, IdentityResolver, Caller, Authenticated } from "./runtime.ts";
export type { JwtProviderConfig } from "./auth/jwt-verifier.ts";
export { startService } from "./service.ts";
export type { RunningService, ServiceOptions } from "./service.ts";
export type { HttpRoutes } from "./http/app.ts";
export { bearerToken } from "./http/app.ts";
export { EnvStore, parseEnvFile } from "./env/store.ts";
export { logger } from "./logger.ts";
export type { Id, Infer } from "./values/validators.ts";
export { v } from "./values/validators.ts";
