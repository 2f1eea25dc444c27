/**
 * `bindAuthData` (requirements §4.3 "Client creation options"): on the server, binds the auth tables'
 * schema, the data function references and the triggers once, and hands out the two adapters,
 * the data functions and the identity helpers. Not a browser client (that is Better Auth's
 * `createAuthClient`); it was called `createClient`, which stays as a deprecated alias.
 */
import type { ActionCtx, MutationCtx, QueryCtx, SchemaDefinition } from "service-auth/server";
import { adapter, httpAdapter } from "./adapter.ts";
import {
  getAuthUserId,
  getAuthUserIdentity,
  getHeaders,
  getSession,
  type IdentityCtx,
} from "./current-user.ts";
import { type AuthFunctions, type CreateApiOptions, createApi } from "./data/functions.ts";
import type { AuthTriggers } from "./data/types.ts";
import { type KeyManagingAuth, keyFunctions } from "./keys/functions.ts";

/**
 * What {@link bindAuthData} binds.
 *
 * @example
 * ```ts
 * import { type AuthDataOptions, type AuthFunctions, bindAuthData } from "service-auth/auth";
 * import { anyApi } from "service-auth/server";
 * import { internalMutation } from "./functions.ts";
 * import schema from "./schema.ts";
 *
 * const options: AuthDataOptions<typeof schema> = {
 *   authFunctions: anyApi.auth as AuthFunctions,
 *   schema,
 *   internalMutation, // auth writes run the app's triggers too
 * };
 * export const authData = bindAuthData(options);
 * ```
 */
export interface AuthDataOptions<S extends SchemaDefinition> {
  /** References to the app's auth data functions, e.g. `internal.auth`. */
  authFunctions: AuthFunctions;
  schema: S;
  /**
   * The app's wrapped mutation builder, so auth writes run application triggers. Without it auth
   * writes use the platform default and application triggers do not run.
   */
  internalMutation?: CreateApiOptions<S>["internalMutation"];
  /** Triggers on auth tables (e.g. `user.beforeCreate`), run in the auth write's transaction. */
  triggers?: AuthTriggers<S>;
}

/**
 * Binds the app's auth data setup once, for the modules that need it:
 *
 * ```ts
 * export const authData = bindAuthData({ authFunctions: anyApi.auth, schema, internalMutation });
 * export const createAuth = (ctx: ActionCtx) => betterAuth({ database: authData.httpAdapter(ctx), … });
 * export const { create, findOne, …, rotateKeys } = authData.createAuthFunctions(createAuth);
 * ```
 *
 * @example
 * ```ts
 * // auth.ts
 * import { betterAuth } from "better-auth";
 * import { type AuthFunctions, bindAuthData } from "service-auth/auth";
 * import { type ActionCtx, anyApi } from "service-auth/server";
 *
 * const authFunctions: AuthFunctions = anyApi.auth;
 * export const authData = bindAuthData({ authFunctions, schema, internalMutation });
 *
 * export const createAuth = (ctx: ActionCtx) =>
 *   betterAuth({ ...options, database: authData.httpAdapter(ctx) });
 * export const {
 *   create, findOne, findMany, count, updateOne, updateMany, deleteOne, deleteMany,
 *   consumeOne, incrementOne, getLatestJwks, rotateKeys, retireKeys, checkOptions,
 * } = authData.createAuthFunctions(createAuth);
 * ```
 */
export function bindAuthData<S extends SchemaDefinition>(options: AuthDataOptions<S>) {
  const config = { schema: options.schema, triggers: options.triggers as AuthTriggers<any> | undefined };
  return {
    /** Better Auth database adapter over `ctx.db`, inside the caller's transaction (queries and mutations). */
    adapter: (ctx: QueryCtx<any> | MutationCtx<any>) => adapter(ctx, config),
    /** Better Auth database adapter through `runQuery`/`runMutation` (HTTP routes and actions). */
    httpAdapter: (ctx: Pick<ActionCtx, "runQuery" | "runMutation">) =>
      httpAdapter(ctx, { authFunctions: options.authFunctions, schema: options.schema }),
    /**
     * The internal data functions of requirements §4.2 (`create` … `deleteMany`, `getLatestJwks`,
     * `rotateKeys`, `retireKeys`); export them from the app's `auth` module.
     */
    createAuthFunctions: (
      createAuth: (ctx: ActionCtx) => KeyManagingAuth,
      extra: { skipValidation?: boolean } = {},
    ) => ({
      ...createApi(options.schema, {
        internalMutation: options.internalMutation,
        triggers: options.triggers,
        skipValidation: extra.skipValidation,
      }),
      // The scheduled retirement of a graceful rotation runs this module's `retireKeys`.
      ...keyFunctions(createAuth, {
        retireKeys: (options.authFunctions as unknown as Record<string, any>).retireKeys,
      }),
    }),
    getAuthUserIdentity,
    getAuthUserId,
    /** The caller's session document, read from the database in actions too (through `authFunctions`). */
    getSession: (ctx: IdentityCtx) => getSession(ctx, { authFunctions: options.authFunctions }),
    getHeaders,
  };
}
