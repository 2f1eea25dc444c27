/**
 * The HTTP entry of SPEC §4.1: a Hono router with the cross-origin rule on `/api/*` and the auth
 * middleware serving Better Auth under `/api/auth/*`, wrapped as the platform's HTTP routes.
 *
 * Clients that cannot use cookies (another site, native apps) send them in `Service-Auth-Cookie`
 * and receive them in `Set-Service-Auth-Cookie`; the middleware bridges both ways.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { ActionCtx, EnvReader, HttpRoutes } from "service-auth/server";
import { siteOriginOf } from "./config.ts";
import { DEFAULT_BASE_PATH } from "./plugin/options.ts";

/** What `authMiddleware` needs from an auth instance. */
export interface AuthHandler {
  handler(request: Request): Promise<Response>;
}

export type CreateAuth = (ctx: ActionCtx) => AuthHandler;

export type HttpEnv = { Bindings: ActionCtx };

const COOKIE_HEADER = "service-auth-cookie";
const SET_COOKIE_HEADER = "set-service-auth-cookie";

/** Copies `Service-Auth-Cookie` into `Cookie` so Better Auth sees cookies sent by header. */
function withHeaderCookies(request: Request): Request {
  const extra = request.headers.get(COOKIE_HEADER);
  if (!extra) return request;
  const headers = new Headers(request.headers);
  const existing = headers.get("cookie");
  headers.set("cookie", existing ? `${existing}; ${extra}` : extra);
  headers.delete(COOKIE_HEADER);
  return new Request(request, { headers });
}

/** Mirrors `Set-Cookie` into `Set-Service-Auth-Cookie` (readable by cross-origin scripts). */
function withExposedCookies(response: Response): Response {
  const cookies = response.headers.getSetCookie();
  if (cookies.length === 0) return response;
  const headers = new Headers(response.headers);
  headers.set(SET_COOKIE_HEADER, cookies.join(", "));
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** Middleware serving the auth endpoints under `basePath` with an auth instance per request. */
export function authMiddleware(
  createAuth: CreateAuth,
  options: { basePath?: string } = {},
): MiddlewareHandler<HttpEnv> {
  const basePath = options.basePath ?? DEFAULT_BASE_PATH;
  return async (c, next) => {
    const path = c.req.path;
    if (path !== basePath && !path.startsWith(`${basePath}/`)) return next();
    const auth = createAuth(c.env);
    return withExposedCookies(await auth.handler(withHeaderCookies(c.req.raw)));
  };
}

/** The cross-origin rule of SPEC §4.1 (origin `SITE_URL`, credentials allowed). */
export function corsRule(env: EnvReader) {
  return {
    origin: siteOriginOf(env),
    allowHeaders: ["Content-Type", "Authorization", "Service-Auth-Cookie"],
    exposeHeaders: ["Set-Service-Auth-Cookie"],
    allowMethods: ["GET", "POST", "OPTIONS"],
    credentials: true,
  };
}

/**
 * The platform HTTP routes: cross-origin rule, auth middleware, then the application's router.
 * `app` handlers get the action ctx as `c.env`.
 */
export function authHttpRouter(options: {
  createAuth: CreateAuth;
  app?: Hono<HttpEnv>;
  basePath?: string;
}): HttpRoutes {
  const router = new Hono<HttpEnv>();
  router.use(authMiddleware(options.createAuth, { basePath: options.basePath }));
  if (options.app) router.route("/", options.app);
  return {
    fetch: (request, ctx) => router.fetch(request, ctx),
    cors: corsRule,
  };
}
