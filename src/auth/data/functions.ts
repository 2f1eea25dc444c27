/**
 * The auth data layer as internal functions: `createApi` wraps each data operation of
 * operations.ts (create / find / count / update / delete on the auth tables, with model triggers
 * and unique fields) as an internal query or mutation of the same name, the functions the HTTP adapter calls through `runQuery` / `runMutation`
 * (requirements §4.2). The direct adapter calls the same operations with the caller's ctx (same
 * transaction).
 *
 * Documents there are stored documents: `_id`, numbers for timestamps, schema field names. The
 * adapters translate to and from Better Auth's shapes.
 */
import type {
  DataModelOf,
  FunctionBuilders,
  FunctionReference,
  RegisteredFunction,
  SchemaDefinition,
} from "service-auth/server";
import { functionsFor } from "service-auth/server";
import {
  type ArgsOf,
  DATA_OPERATIONS,
  type KindOf,
  OPERATION_NAMES,
  type OperationName,
  type ResultOf,
} from "./operations.ts";
import type { AuthTriggers, DataConfig } from "./types.ts";
import { checkModelArgs, LOOSE_ARGS } from "./validators.ts";

type MutationBuilder<S extends SchemaDefinition> = FunctionBuilders<DataModelOf<S>>["internalMutation"];

export interface CreateApiOptions<S extends SchemaDefinition = SchemaDefinition> {
  /**
   * The mutation builder to use, e.g. the application's `customMutation` wrapper so auth writes
   * run application-level triggers. Default: the platform's plain `internalMutation`.
   */
  internalMutation?: MutationBuilder<S>;
  /** true: args checked loosely (`v.any()`), smaller validators; false (default): per-model validators. */
  skipValidation?: boolean;
  /** Model triggers, run in the same transaction as the auth write. */
  triggers?: AuthTriggers<S>;
  /** Unique fields per model (default `user.email`, `session.token`). */
  uniqueFields?: Readonly<Record<string, readonly string[]>>;
  /** Models the functions may touch (default: the auth tables present in the schema). */
  models?: readonly string[];
}

/** The internal data functions of {@link createApi}, one per operation of operations.ts. */
export type AuthDataFunctions = {
  [N in OperationName]: RegisteredFunction<KindOf<N>, "internal", ArgsOf<N>, ResultOf<N>>;
};

/**
 * References to the data functions, as the HTTP adapter calls them: the `internal.<module>` of
 * the module exporting {@link createApi}'s functions (e.g. `internal.auth`).
 *
 * @example
 * ```ts
 * import { type AuthFunctions, bindAuthData } from "service-auth/auth";
 * import { anyApi } from "service-auth/server";
 *
 * // auth.ts: references to this module's data functions (`internal.auth`).
 * const authFunctions: AuthFunctions = anyApi.auth;
 * export const authData = bindAuthData({ authFunctions, schema });
 * ```
 */
export type AuthFunctions = { [N in OperationName]: FunctionReference<KindOf<N>, any, ArgsOf<N>, any> };

/**
 * The auth data functions of requirements §4.2 as internal functions of `schema`: export them from a
 * module (e.g. `auth`) and give `internal.auth` to the HTTP adapter.
 */
export function createApi<S extends SchemaDefinition>(
  schema: S,
  options: CreateApiOptions<S> = {},
): AuthDataFunctions {
  const builders = functionsFor(schema);
  const builderOf = {
    mutation: (options.internalMutation ??
      builders.internalMutation) as FunctionBuilders<any>["internalMutation"],
    query: builders.internalQuery as FunctionBuilders<any>["internalQuery"],
  };
  const config: DataConfig = {
    schema,
    triggers: options.triggers,
    uniqueFields: options.uniqueFields,
    models: options.models,
  };
  const skip = options.skipValidation ?? false;
  const api: Record<string, RegisteredFunction> = {};
  for (const name of OPERATION_NAMES) {
    const operation = DATA_OPERATIONS[name];
    api[name] = builderOf[operation.kind]({
      args: skip ? LOOSE_ARGS : operation.args,
      handler: (ctx, args: any) => {
        if (!skip) checkModelArgs(config, args);
        return operation.run(ctx, config, args);
      },
    });
  }
  return api as AuthDataFunctions;
}
