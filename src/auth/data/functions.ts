/**
 * The auth data layer as internal functions: `createApi` wraps the data operations of `data/`
 * (create / find / count / update / delete on the auth tables, with model triggers and unique
 * fields) as the internal functions the HTTP adapter calls through `runQuery` / `runMutation`
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
import { dbCount } from "./count.ts";
import { dbCreate } from "./create.ts";
import { dbDeleteMany, dbDeleteOne } from "./delete.ts";
import { dbFindMany, dbFindOne } from "./find.ts";
import type {
  AuthTriggers,
  CountArgs,
  CreateArgs,
  DataConfig,
  DeleteArgs,
  FindManyArgs,
  FindOneArgs,
  StoredDoc,
  UpdateArgs,
} from "./types.ts";
import { dbUpdateMany, dbUpdateOne } from "./update.ts";
import { argValidators, checkModelArgs } from "./validators.ts";

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

/** The internal data functions of {@link createApi}. */
export type AuthApi = {
  create: RegisteredFunction<"mutation", "internal", CreateArgs, StoredDoc>;
  findOne: RegisteredFunction<"query", "internal", FindOneArgs, StoredDoc | null>;
  findMany: RegisteredFunction<"query", "internal", FindManyArgs, StoredDoc[]>;
  count: RegisteredFunction<"query", "internal", CountArgs, number>;
  updateOne: RegisteredFunction<"mutation", "internal", UpdateArgs, StoredDoc | null>;
  updateMany: RegisteredFunction<"mutation", "internal", UpdateArgs, number>;
  deleteOne: RegisteredFunction<"mutation", "internal", DeleteArgs, null>;
  deleteMany: RegisteredFunction<"mutation", "internal", DeleteArgs, number>;
};

/**
 * References to the data functions, as the HTTP adapter calls them: the `internal.<module>` of
 * the module exporting {@link createApi}'s functions (e.g. `internal.auth`).
 */
export interface AuthFunctions {
  create: FunctionReference<"mutation", any, CreateArgs, any>;
  findOne: FunctionReference<"query", any, FindOneArgs, any>;
  findMany: FunctionReference<"query", any, FindManyArgs, any>;
  count: FunctionReference<"query", any, CountArgs, any>;
  updateOne: FunctionReference<"mutation", any, UpdateArgs, any>;
  updateMany: FunctionReference<"mutation", any, UpdateArgs, any>;
  deleteOne: FunctionReference<"mutation", any, DeleteArgs, any>;
  deleteMany: FunctionReference<"mutation", any, DeleteArgs, any>;
}

/**
 * The auth data functions of requirements §4.2 as internal functions of `schema`: export them from a
 * module (e.g. `auth`) and give `internal.auth` to the HTTP adapter.
 */
export function createApi<S extends SchemaDefinition>(schema: S, options: CreateApiOptions<S> = {}): AuthApi {
  const builders = functionsFor(schema);
  const mutation = (options.internalMutation ??
    builders.internalMutation) as FunctionBuilders<any>["internalMutation"];
  const query = builders.internalQuery as FunctionBuilders<any>["internalQuery"];
  const config: DataConfig = {
    schema,
    triggers: options.triggers,
    uniqueFields: options.uniqueFields,
    models: options.models,
  };
  const skip = options.skipValidation ?? false;
  const args = argValidators(skip);
  const checked = <A extends { model: string; data?: unknown; update?: unknown }>(a: A): A => {
    if (!skip) checkModelArgs(config, a);
    return a;
  };
  return {
    create: mutation({ args: args.create, handler: (ctx, a: any) => dbCreate(ctx, config, checked(a)) }),
    findOne: query({ args: args.findOne, handler: (ctx, a: any) => dbFindOne(ctx, config, checked(a)) }),
    findMany: query({ args: args.findMany, handler: (ctx, a: any) => dbFindMany(ctx, config, checked(a)) }),
    count: query({ args: args.count, handler: (ctx, a: any) => dbCount(ctx, config, checked(a)) }),
    updateOne: mutation({
      args: args.update,
      handler: (ctx, a: any) => dbUpdateOne(ctx, config, checked(a)),
    }),
    updateMany: mutation({
      args: args.update,
      handler: (ctx, a: any) => dbUpdateMany(ctx, config, checked(a)),
    }),
    deleteOne: mutation({
      args: args.remove,
      handler: (ctx, a: any) => dbDeleteOne(ctx, config, checked(a)),
    }),
    deleteMany: mutation({
      args: args.remove,
      handler: (ctx, a: any) => dbDeleteMany(ctx, config, checked(a)),
    }),
  } as unknown as AuthApi;
}
