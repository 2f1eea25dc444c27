/**
 * `getLatestJwks` and `rotateKeys` (requirements §4.2) as internal actions, so they run from the CLI:
 * `npm run cli -- run auth:rotateKeys` (a hard cut), or with `'{"overlap":true}'` (graceful: old
 * tokens keep working until they expire, then a scheduled `retireKeys` removes the old key); and
 * `checkOptions`, which a server runs once at start (`checkAuthStarts`).
 *
 * One truth for the signing key: rotation and retirement change the `jwks` table and store the
 * resulting key set in a stored `JWKS` themselves (next-jwks.ts), so the servers, the console and
 * the next operation see the same keys whichever command ran last. Piping the output into
 * `env set JWKS`, as before, stores the same value again.
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
import { AUTH_ENV_COMMAND, AUTH_SECRET_VAR, JWKS_VAR } from "./auth-env.ts";
import { type KeyChange, nextJwksValue } from "./next-jwks.ts";

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

/**
 * A `JWKS` in this process's environment overrides the stored one, and no command can change
 * what a deployment's environment says: a rotation here would change the table and nothing the
 * servers sign with.
 */
function refuseProcessJwks(ctx: ActionCtx): void {
  if (ctx.env.fromProcess(JWKS_VAR)) {
    throw new AppError(
      "BAD_REQUEST",
      `${JWKS_VAR} is set in this process's environment, which a rotation cannot change: rotate where ${JWKS_VAR} is stored in the database (without it in the environment), or replace the deployment's ${JWKS_VAR}`,
    );
  }
}

/**
 * Stores the key set after `change` in `JWKS` when the servers read it from the store (it is
 * set, and not by the process environment); returns the value the servers now use.
 */
async function storeKeySet(ctx: ActionCtx, previous: string | undefined, table: string, change: KeyChange) {
  if (previous === undefined || ctx.env.fromProcess(JWKS_VAR)) return table;
  const next = nextJwksValue(table, previous, change);
  if (next !== previous) await ctx.env.set(JWKS_VAR, next);
  return next;
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
     * New signing keys, stored in `JWKS` (when the servers read it from the store) and answered
     * as its value. Without `overlap` every existing token becomes invalid; with it the keys in
     * use verify until their tokens have expired. `actor` (a user id) and `source` (e.g. "admin
     * console") go to the audit trail when the app keeps one. Refused while this process's
     * environment sets `JWKS` (no command can change that).
     */
    rotateKeys: internalAction({
      args: {
        actor: v.optional(v.string()),
        source: v.optional(v.string()),
        overlap: v.optional(v.union(v.boolean(), v.number())),
      },
      handler: async (ctx, args): Promise<string> => {
        requireSecret(ctx);
        refuseProcessJwks(ctx);
        const previous = ctx.env.get(JWKS_VAR);
        const body = { actor: args.actor, source: args.source ?? "cli", overlap: args.overlap };
        const { jwks, retireAt } = await createAuth(ctx).api.rotateKeys({ body });
        // Graceful: the old keys verify until `retireAt` by the clock (stored-jwks.ts); this job
        // then deletes them from the key table and the variable.
        if (retireAt !== undefined) await ctx.scheduler.runAt(retireAt, retireRef, {});
        const change: KeyChange = retireAt === undefined ? { kind: "hard" } : { kind: "graceful", retireAt };
        return storeKeySet(ctx, previous, jwks, change);
      },
    }),
    /**
     * Deletes the keys whose graceful-rotation overlap has ended (scheduled by `rotateKeys` with
     * `overlap`), from the table and from a stored `JWKS`; returns the remaining key set.
     */
    retireKeys: internalAction({
      args: {},
      handler: async (ctx): Promise<string> => {
        requireSecret(ctx);
        const auth = createAuth(ctx);
        if (!auth.api.retireKeys)
          throw new Error("the auth instance has no retireKeys (the backend plugin adds it)");
        const previous = ctx.env.get(JWKS_VAR);
        const { jwks, retired } = await auth.api.retireKeys({});
        if (retired.length > 0)
          logger.info("signing keys retired after their overlap", { keys: retired.length });
        return storeKeySet(ctx, previous, jwks, { kind: "retire", retired });
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
