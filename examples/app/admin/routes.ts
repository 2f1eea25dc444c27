/**
 * The admin console at `/admin`, served by the app's own HTTP routes.
 *
 * Who sees what is decided by the `admin:viewer` query, run with a token minted from the request's
 * session cookie (steps 1+2 of every request, then the role check): administrators get the
 * console, signed-out visitors the sign-in page (401), everyone else 403. The console's
 * server-side operations — the names of the stored env variables and a key rotation — run only after the same query accepted the caller's bearer
 * token. Every other change goes through Better Auth's admin endpoints from the browser.
 */
import { type Context, Hono } from "hono";
import { browserScript, type CreateAuth, type HttpEnv, JWKS_VAR, siteUrlOf } from "service-auth/app";
import { getRequestToken } from "service-auth/client";
import {
  AppError,
  anyApi,
  type Backend,
  bearerToken,
  clientErrorOf,
  type FunctionReference,
  isAppError,
  logger,
} from "service-auth/server";
import { pageSecurityHeaders } from "../web/routes.ts";
import { type ConsoleView, consolePage } from "./page.ts";

const consoleScript = browserScript(new URL("./console/main.ts", import.meta.url));

export interface AdminConsoleOptions {
  backend: Backend;
  createAuth: CreateAuth;
  /** The access check (default `admin:viewer`, from `createAdminFunctions`). */
  viewer?: FunctionReference<"query"> | string;
  /** The internal action that makes new signing keys and returns the `JWKS` value (default `auth:rotateKeys`). */
  rotateKeys?: FunctionReference<"action"> | string;
}

const STATUS: Record<ConsoleView, 200 | 401 | 403> = { console: 200, "sign-in": 401, forbidden: 403 };

/** Routes `/admin`, `/admin/console.js` and `/admin/api/*`. */
export function adminConsoleRoutes(options: AdminConsoleOptions): Hono<HttpEnv> {
  const { backend, createAuth } = options;
  const viewerRef = options.viewer ?? (anyApi.admin.viewer as FunctionReference<"query">);
  const rotateRef = options.rotateKeys ?? (anyApi.auth.rotateKeys as FunctionReference<"action">);

  /** The console view for `token`: what `admin:viewer` says about its holder. */
  async function viewFor(token: string | null): Promise<ConsoleView> {
    if (!token) return "sign-in";
    try {
      await backend.runQuery(viewerRef, {}, { token });
      return "console";
    } catch (error) {
      if (isAppError(error) && error.code === "UNAUTHORIZED") return "sign-in";
      if (isAppError(error) && (error.code === "FORBIDDEN" || error.code === "ACCOUNT_BANNED"))
        return "forbidden";
      throw error;
    }
  }

  /** Runs `handler` for an administrator's bearer token; anyone else gets the check's typed error. */
  async function asAdmin(
    c: Context<HttpEnv>,
    handler: (viewer: { _id: string }) => Promise<unknown>,
  ): Promise<Response> {
    try {
      const token = bearerToken(c.req.header("authorization"));
      if (!token) throw new AppError("UNAUTHORIZED", "Sign in first");
      const { value: viewer } = await backend.runQuery(viewerRef, {}, { token });
      return c.json({ status: "success", value: await handler(viewer as { _id: string }) });
    } catch (error) {
      // The registry's status and shape; internal errors are logged and shown as INTERNAL.
      const { status, error: shown } = clientErrorOf(error);
      return c.json({ status: "error", ...shown }, status as 400);
    }
  }

  const routes = new Hono<HttpEnv>();
  routes.use("/admin", pageSecurityHeaders);
  routes.use("/admin/*", pageSecurityHeaders);

  routes.get("/admin", async (c) => {
    // Always a fresh token from the session cookie: a cached JWT cookie may belong to a session
    // that impersonation or sign-out has since replaced.
    const { token, setCookies } = await getRequestToken(c.req.raw.headers, {
      url: siteUrlOf(c.env.env),
      cache: false,
      fetch: async (input, init) => createAuth(c.env).handler(new Request(input, init)),
    });
    for (const cookie of setCookies) c.header("set-cookie", cookie, { append: true });
    c.header("cache-control", "no-store");
    const view = await viewFor(token);
    return c.html(consolePage(view), STATUS[view]);
  });

  routes.get("/admin/console.js", consoleScript);

  /** Names of the stored env variables; the values never leave the server. */
  routes.get("/admin/api/env", (c) =>
    asAdmin(c, async () => ({ names: backend.env.stored().map(([name]) => name) })),
  );

  /**
   * New signing keys. The rotation stores them in a stored `JWKS` itself (as from the CLI); every
   * running instance picks them up.
   */
  /** Rotates with `overlap` (graceful: the old key verifies until its tokens expire) or without (hard cut). */
  const rotateKeys = (c: Context<HttpEnv>, overlap: boolean) =>
    asAdmin(c, async (viewer) => {
      // Who rotated goes to the audit trail (when the app keeps one).
      await backend.runAction(
        rotateRef,
        { actor: viewer._id, source: "admin console", ...(overlap ? { overlap: true } : {}) },
        { allowInternal: true },
      );
      const stored = backend.env.stored().some(([name]) => name === JWKS_VAR);
      logger.info(
        overlap
          ? "signing keys rotated gracefully from the admin console"
          : "signing keys rotated from the admin console",
      );
      return { storedJwksUpdated: stored };
    });
  routes.post("/admin/api/rotate-keys", (c) => rotateKeys(c, false));
  /** The old key keeps verifying until the tokens it signed expire; a scheduled job then removes it. */
  routes.post("/admin/api/rotate-keys-gracefully", (c) => rotateKeys(c, true));

  return routes;
}
