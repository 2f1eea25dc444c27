/**
 * The CLI's `run --as <email|userId>`: a real session for the user and a JWT for it from the
 * token endpoint, so the function runs through steps 1+2 exactly like a signed-in client's call.
 * The platform CLI does not know about auth; the app hands this to it as `ServiceOptions.runAs`.
 */
import { createHmac } from "node:crypto";
import type { ActionCtx, Backend } from "service-auth/server";
import { DEFAULT_BASE_PATH } from "./plugins/backend/options.ts";
import { siteUrlOf } from "./provider-config.ts";

/**
 * The part of a Better Auth instance `runAsUser` uses.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import type { SessionMintingAuth } from "service-auth/auth";
 *
 * // A Better Auth instance is one; `runAsUser` takes a function making it.
 * const createAuth = (ctx: ActionCtx): SessionMintingAuth =>
 *   betterAuth({ ...options, database: authData.httpAdapter(ctx) });
 * ```
 */
export interface SessionMintingAuth {
  handler(request: Request): Promise<Response>;
  $context: Promise<{
    secret: string;
    authCookies: { sessionToken: { name: string } };
    internalAdapter: {
      findUserByEmail(email: string): Promise<{ user: { id: string } } | null>;
      findUserById(id: string): Promise<{ id: string } | null>;
      createSession(userId: string): Promise<{ token: string }>;
      deleteSession(token: string): Promise<void>;
    };
  }>;
}

/**
 * A session made for one CLI call: its JWT, and `end()` to delete the session afterwards.
 *
 * @example
 * ```ts
 * import { type RunAsSession, runAsUser } from "service-auth/auth";
 *
 * // What the CLI does for `run --as ada@example.com`:
 * const session: RunAsSession = await runAsUser(createAuth)(backend, "ada@example.com");
 * try {
 *   // … call the function with `Authorization: Bearer ${session.token}` …
 * } finally {
 *   await session.end();
 * }
 * ```
 */
export interface RunAsSession {
  token: string;
  end(): Promise<void>;
}

/** Better Auth's signed cookie value: `token.base64(HMAC-SHA256(secret, token))`. */
function signedCookieValue(token: string, secret: string): string {
  const signature = createHmac("sha256", secret).update(token).digest("base64");
  return encodeURIComponent(`${token}.${signature}`);
}

/**
 * `ServiceOptions.runAs` for an app whose auth instance comes from `createAuth`.
 *
 * @example
 * ```ts
 * // app.ts: `npm run cli -- run messages:list --as ada@example.com`
 * import { runAsUser } from "service-auth/auth";
 * import * as auth from "./auth.ts";
 *
 * export const app: ServiceOptions = {
 *   // …schema, modules, auth, routes…
 *   runAs: runAsUser(auth.createAuth),
 * };
 * ```
 */
export function runAsUser(createAuth: (ctx: ActionCtx) => SessionMintingAuth, basePath = DEFAULT_BASE_PATH) {
  return async (backend: Backend, who: string): Promise<RunAsSession> => {
    const ctx = await backend.actionCtx({}, false);
    const auth = createAuth(ctx);
    const context = await auth.$context;
    const userId = who.includes("@")
      ? (await context.internalAdapter.findUserByEmail(who.toLowerCase()))?.user.id
      : (await context.internalAdapter.findUserById(who))?.id;
    if (!userId) throw new Error(`No user ${who}`);
    const session = await context.internalAdapter.createSession(userId);
    const end = () => context.internalAdapter.deleteSession(session.token);
    try {
      const cookie = `${context.authCookies.sessionToken.name}=${signedCookieValue(session.token, context.secret)}`;
      const url = `${siteUrlOf(ctx.env)}${basePath}/backend/token`;
      const res = await auth.handler(new Request(url, { headers: { cookie } }));
      const body = (await res.json().catch(() => ({}))) as { token?: string };
      if (!res.ok || !body.token) throw new Error(`the token endpoint answered ${res.status} for ${who}`);
      return { token: body.token, end };
    } catch (error) {
      await end();
      throw error;
    }
  };
}
