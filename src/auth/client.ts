/**
 * `createClient` (requirements §4.3 "Client creation options"): binds the auth tables' schema, the data
 * function references and the triggers once, and hands out the two adapters, the data functions
 * and the identity helpers.
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

export interface ClientOptions<S extends SchemaDefinition> {
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

export function createClient<S extends SchemaDefinition>(options: ClientOptions<S>) {
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
