/**
 * `getLatestJwks` and `rotateKeys` (SPEC §4.2) as internal actions, so they run from the CLI:
 * `npm run --silent cli -- run auth:rotateKeys | npm run --silent cli -- env set JWKS`.
 */
import { type ActionCtx, functionsFor } from "service-auth/server";

/** The part of an auth instance the key functions call (the `backend` plugin's server-only endpoints). */
export interface KeyManagingAuth {
  api: {
    getLatestJwks(input?: object): Promise<{ jwks: string }>;
    rotateKeys(input?: object): Promise<{ jwks: string }>;
  };
}

const { internalAction } = functionsFor();

export function keyFunctions(createAuth: (ctx: ActionCtx) => KeyManagingAuth) {
  return {
    /** The current key set as the `JWKS` value; generates signing keys if none exist. */
    getLatestJwks: internalAction({
      args: {},
      handler: async (ctx): Promise<string> => (await createAuth(ctx).api.getLatestJwks({})).jwks,
    }),
    /** New signing keys as the `JWKS` value; every existing token becomes invalid. */
    rotateKeys: internalAction({
      args: {},
      handler: async (ctx): Promise<string> => (await createAuth(ctx).api.rotateKeys({})).jwks,
    }),
  };
}
