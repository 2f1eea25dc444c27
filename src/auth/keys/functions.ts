/**
 * `getLatestJwks` and `rotateKeys` (requirements §4.2) as internal actions, so they run from the CLI:
 * `npm run --silent cli -- run auth:rotateKeys | npm run --silent cli -- env set JWKS` (a hard cut),
 * or with `'{"overlap":true}'` (graceful: old tokens keep working until they expire, then a
 * scheduled `retireKeys` removes the old key); and
 * `checkOptions`, which a server runs once at start (`checkAuthStarts`).
 */
import {
  type ActionCtx,
  AppError,
  anyApi,
  type FunctionReference,
  functionsFor,
  logger,
} from "service-auth/server";
import { v } from "service-auth/values";
import { AUTH_ENV_COMMAND, AUTH_SECRET_VAR } from "./auth-env.ts";

/**
 * The part of an auth instance the key functions call: the `backend` plugin's server-only
 * endpoints, and the initialisation every Better Auth instance has (`$context`).
 */
export interface KeyManagingAuth {
  $context: Promise<unknown>;
  api: {
    getLatestJwks(input?: object): Promise<{ jwks: string }>;
    rotateKeys(input?: object): Promise<{ jwks: string; retireAt?: number }>;
    /** Present on every instance with the `backend` plugin; optional for hand-made fakes. */
    retireKeys?(input?: object): Promise<{ jwks: string; retired: string[] }>;
  };
}

const { internalAction } = functionsFor();

/**
 * Private keys are encrypted with `SERVICE_AUTH_SECRET`. Without it Better Auth would fall back to
 * its built-in default secret, and keys made that way fail to decrypt once the real secret is set.
 */
function requireSecret(ctx: ActionCtx): void {
  if (!ctx.env.get(AUTH_SECRET_VAR)) {
    throw new AppError(
      "BAD_REQUEST",
      `${AUTH_SECRET_VAR} is not set; signing keys are encrypted with it. Create it first with: ${AUTH_ENV_COMMAND}`,
    );
  }
}

export interface KeyFunctionsOptions {
  /** Where this module's `retireKeys` is exported, for the scheduled retirement (default `auth:retireKeys`). */
  retireKeys?: FunctionReference<"action", "internal", any, any> | string;
}

export function keyFunctions(
  createAuth: (ctx: ActionCtx) => KeyManagingAuth,
  options: KeyFunctionsOptions = {},
) {
  const retireRef = (options.retireKeys ?? anyApi.auth.retireKeys) as FunctionReference<"action">;
  return {
    /** The current key set as the `JWKS` value; generates signing keys if none exist. */
    getLatestJwks: internalAction({
      args: {},
      handler: async (ctx): Promise<string> => {
        requireSecret(ctx);
        return (await createAuth(ctx).api.getLatestJwks({})).jwks;
      },
    }),
    /**
     * New signing keys as the `JWKS` value; every existing token becomes invalid. `actor` (a user
     * id) and `source` (e.g. "admin console") go to the audit trail when the app keeps one.
     */
    rotateKeys: internalAction({
      args: {
        actor: v.optional(v.string()),
        source: v.optional(v.string()),
        overlap: v.optional(v.union(v.boolean(), v.number())),
      },
      handler: async (ctx, args): Promise<string> => {
        requireSecret(ctx);
        const body = { actor: args.actor, source: args.source ?? "cli", overlap: args.overlap };
        const { jwks, retireAt } = await createAuth(ctx).api.rotateKeys({ body });
        // Graceful: the old keys verify until `retireAt` by the clock (stored-jwks.ts); this job
        // then deletes them from the key table, so later key sets no longer carry them.
        if (retireAt !== undefined) await ctx.scheduler.runAt(retireAt, retireRef, {});
        return jwks;
      },
    }),
    /**
     * Deletes the keys whose graceful-rotation overlap has ended (scheduled by `rotateKeys` with
     * `overlap`); returns the remaining key set as the `JWKS` value.
     */
    retireKeys: internalAction({
      args: {},
      handler: async (ctx): Promise<string> => {
        requireSecret(ctx);
        const auth = createAuth(ctx);
        if (!auth.api.retireKeys)
          throw new Error("the auth instance has no retireKeys (the backend plugin adds it)");
        const { jwks, retired } = await auth.api.retireKeys({});
        if (retired.length > 0)
          logger.info("signing keys retired after their overlap", { keys: retired.length });
        return jwks;
      },
    }),
    /**
     * Initialises the auth once, plugins included: a configuration refused for an unfixed
     * advisory (docs/security.md) fails here, at start, and not at the first request.
     */
    checkOptions: internalAction({
      args: {},
      handler: async (ctx): Promise<null> => {
        await createAuth(ctx).$context;
        return null;
      },
    }),
  };
}
