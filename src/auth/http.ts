/**
 * The HTTP entry of SPEC §4.1: a Hono router with the cross-origin rule on `/api/*` and the auth
 * middleware serving Better Auth under `/api/auth/*`, wrapped as the platform's HTTP routes.
 *
 * Clients that cannot use cookies (another site, native apps) send them in `Service-Auth-Cookie`
 * and receive them in `Set-Service-Auth-Cookie`; the middleware bridges both ways.
 *
 * Better Auth learns the client's address from a private header the middleware sets from the
 * platform's (`ctx.meta.clientIp`: the socket's peer, or per `TRUSTED_PROXIES` the forwarded
 * client); a copy sent by the client is dropped. Its rate limiter's 429 gets `Retry-After` and the
 * code `TOO_MANY_REQUESTS`.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { ActionCtx, EnvReader, HttpRoutes } from "service-auth/server";
import { siteOriginOf } from "./config.ts";
import { DEFAULT_BASE_PATH } from "./plugin/options.ts";
import { CLIENT_IP_HEADER } from "./rate-limit.ts";

/** What `authMiddleware` needs from an auth instance. */
export interface AuthHandler {
  handler(request: Request): Promise<Response>;
}

export type CreateAuth = (ctx: ActionCtx) => AuthHandler;

export type HttpEnv = { Bindings: ActionCtx };

const COOKIE_HEADER = "service-auth-cookie";
const SET_COOKIE_HEADER = "set-service-auth-cookie";

/**
 * The request as Better Auth gets it: `Service-Auth-Cookie` copied into `Cookie` (so it sees
 * cookies sent by header) and the client address in {@link CLIENT_IP_HEADER}, never the client's.
 */
function authRequest(request: Request, clientIp: string | undefined): Request {
  const extra = request.headers.get(COOKIE_HEADER);
  if (!extra && !clientIp && !request.headers.has(CLIENT_IP_HEADER)) return request;
  const headers = new Headers(request.headers);
  if (extra) {
    const existing = headers.get("cookie");
    headers.set("cookie", existing ? `${existing}; ${extra}` : extra);
    headers.delete(COOKIE_HEADER);
  }
  headers.delete(CLIENT_IP_HEADER);
  if (clientIp) headers.set(CLIENT_IP_HEADER, clientIp);
  return new Request(request, { headers });
}

/**
 * Better Auth's rate-limit answer (`{message}`, `X-Retry-After`) as the platform's: code
 * `TOO_MANY_REQUESTS` and the standard `Retry-After` header (seconds).
 */
function typedTooManyRequests(response: Response): Response {
  if (response.status !== 429) return response;
  const retryAfter = response.headers.get("x-retry-after") ?? "60";
  const headers = new Headers(response.headers);
  headers.set("content-type", "application/json");
  headers.set("retry-after", retryAfter);
  const body = {
    code: "TOO_MANY_REQUESTS",
    message: `Too many requests; try again in ${retryAfter} seconds`,
  };
  return new Response(JSON.stringify(body), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
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
    const response = await auth.handler(authRequest(c.req.raw, c.env.meta?.clientIp));
    return withExposedCookies(typedTooManyRequests(response));
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
