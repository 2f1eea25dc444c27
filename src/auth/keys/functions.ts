/**
 * `getLatestJwks` and `rotateKeys` (requirements §4.2) as internal actions, so they run from the CLI:
 * `npm run --silent cli -- run auth:rotateKeys | npm run --silent cli -- env set JWKS`; and
 * `checkOptions`, which a server runs once at start (`checkAuthStarts`).
 */
import { type ActionCtx, AppError, functionsFor } from "service-auth/server";
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
    rotateKeys(input?: object): Promise<{ jwks: string }>;
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

export function keyFunctions(createAuth: (ctx: ActionCtx) => KeyManagingAuth) {
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
      args: { actor: v.optional(v.string()), source: v.optional(v.string()) },
      handler: async (ctx, args): Promise<string> => {
        requireSecret(ctx);
        const body = { actor: args.actor, source: args.source ?? "cli" };
        return (await createAuth(ctx).api.rotateKeys({ body })).jwks;
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
