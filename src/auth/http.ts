/**
 * The HTTP entry of requirements §4.1: a Hono router with the cross-origin rule on `/api/*` and the auth
 * middleware serving Better Auth under `/api/auth/*`, wrapped as the platform's HTTP routes.
 *
 * Clients that cannot use cookies (another site, native apps) send them in `Service-Auth-Cookie`
 * and receive them in `Set-Service-Auth-Cookie`; the middleware bridges both ways.
 *
 * Better Auth turns a failed database read into "no session" (401, a cleared cookie) or an empty
 * 500, so a database outage would sign browsers out. The middleware watches the database calls
 * an auth request makes; when one failed because the database was unavailable or busy, the answer
 * is that typed 503 (no cookies), whatever Better Auth made of it.
 *
 * Better Auth learns the client's address from a private header the middleware sets from the
 * platform's (`ctx.meta.clientIp`: the socket's peer, or per `TRUSTED_PROXIES` the forwarded
 * client); a copy sent by the client is dropped. Its rate limiter's 429 gets `Retry-After` and the
 * code `TOO_MANY_REQUESTS`.
 */
import { Hono, type MiddlewareHandler } from "hono";
import {
  type ActionCtx,
  type AppError,
  type AuthRouteOutcome,
  countAuthOutcome,
  type EnvReader,
  type HttpRoutes,
  isUnavailableError,
  traceHttpRoute,
} from "service-auth/server";
import { watchingMailFailures } from "./mail/unavailable.ts";
import { type UserDeletingAuth, undoSignUp } from "./mail/undo-sign-up.ts";
import { asOneTimeTransaction, consumesCredential, replayable } from "./one-time/routes.ts";
import { DEFAULT_BASE_PATH } from "./plugins/backend/options.ts";
import { CLIENT_IP_HEADER } from "./rate-limit/rules.ts";
import { originMatcher, TRUSTED_ORIGINS_VAR, trustedOriginsOf } from "./site-origins.ts";

/**
 * What `authMiddleware` needs from an auth instance (`$context`: to undo a sign-up, mail/undo-sign-up.ts).
 *
 * @example
 * ```ts
 * import type { AuthHandler } from "service-auth/auth";
 *
 * // A Better Auth instance is one; so is any stand-in with a `handler`.
 * const teapot: AuthHandler = { handler: async () => new Response("I'm a teapot", { status: 418 }) };
 * ```
 */
export interface AuthHandler extends Partial<UserDeletingAuth> {
  handler(request: Request): Promise<Response>;
}

/**
 * Makes the auth instance for one HTTP request from its action ctx, as {@link authHttpRouter} and
 * {@link authMiddleware} take it.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import type { CreateAuth } from "service-auth/auth";
 *
 * // auth.ts: Better Auth over the HTTP adapter.
 * export const createAuth: CreateAuth = (ctx) =>
 *   betterAuth({ ...options, database: authData.httpAdapter(ctx) });
 * ```
 */
export type CreateAuth = (ctx: ActionCtx) => AuthHandler;

/**
 * The Hono environment of the app's routes: each handler gets the request's action ctx as `c.env`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { authHttpRouter, type HttpEnv } from "service-auth/auth";
 *
 * const app = new Hono<HttpEnv>();
 * app.get("/api/me/count", async (c) => c.json(await c.env.runQuery(api.users.count, {})));
 * export default () => authHttpRouter({ createAuth, app });
 * ```
 */
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

/** `ctx` with its database calls watched: `fault()` is the first database fault one of them threw. */
function watchDatabase(ctx: ActionCtx): { ctx: ActionCtx; fault(): AppError | undefined } {
  let fault: AppError | undefined;
  const note = (error: unknown): never => {
    if (isUnavailableError(error)) fault ??= error;
    throw error;
  };
  const watched: ActionCtx = {
    ...ctx,
    auth: { ...ctx.auth, getUserIdentity: () => ctx.auth.getUserIdentity().catch(note) },
    runQuery: ((ref: any, args: any) => ctx.runQuery(ref, args).catch(note)) as ActionCtx["runQuery"],
    runMutation: ((ref: any, args: any) =>
      ctx.runMutation(ref, args).catch(note)) as ActionCtx["runMutation"],
    runAction: ((ref: any, args: any) => ctx.runAction(ref, args).catch(note)) as ActionCtx["runAction"],
    runInTransaction: (fn) => ctx.runInTransaction(fn).catch(note),
  };
  return { ctx: watched, fault: () => fault };
}

/** The typed 503 of a database fault; no `Set-Cookie`, so the browser keeps its session. */
function databaseFaultResponse(fault: AppError): Response {
  return new Response(JSON.stringify({ status: "error", code: fault.code, message: fault.message }), {
    status: fault.status,
    headers: { "content-type": "application/json", "retry-after": "1" },
  });
}

/**
 * Middleware serving the auth endpoints under `basePath` with an auth instance per request.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { authMiddleware, type HttpEnv } from "service-auth/auth";
 *
 * // Better Auth under /auth/* of a router of the app's own (authHttpRouter does this for /api/auth).
 * const router = new Hono<HttpEnv>();
 * router.use(authMiddleware(createAuth, { basePath: "/auth" }));
 * ```
 */
export function authMiddleware(
  createAuth: CreateAuth,
  options: {
    basePath?: string;
    /**
     * More routes (paths below `basePath`, e.g. a plugin's of the app's own) that consume a one-time
     * credential and so run as one transaction, as the built-in ones do (one-time/routes.ts).
     */
    oneTimeRoutes?: readonly string[];
  } = {},
): MiddlewareHandler<HttpEnv> {
  const basePath = options.basePath ?? DEFAULT_BASE_PATH;
  return async (c, next) => {
    const path = c.req.path;
    if (path !== basePath && !path.startsWith(`${basePath}/`)) return next();
    const route = path.slice(basePath.length);
    return traceHttpRoute(
      `auth ${c.req.method} ${ROUTE_NAME.test(route) ? route : "other"}`,
      c.req.raw,
      async () => {
        const database = watchDatabase(c.env);
        let response: Response;
        let mailFailed: boolean;
        let auth: AuthHandler;
        try {
          auth = createAuth(database.ctx);
          const handler = auth;
          const request = authRequest(c.req.raw, c.env.meta?.clientIp);
          ({ value: response, mailFailed } = await watchingMailFailures(async () => {
            if (!consumesCredential(route, request.headers, options.oneTimeRoutes))
              return handler.handler(request);
            // One transaction, so parallel uses of one credential give the sequential outcome
            // (one-time/routes.ts); it may run again after a conflict, on a fresh copy of the request.
            const copy = await replayable(request);
            return asOneTimeTransaction(() => database.ctx.runInTransaction(() => handler.handler(copy())));
          }));
        } catch (error) {
          const fault = database.fault();
          if (fault) return databaseFaultResponse(fault);
          throw error;
        }
        const fault = database.fault();
        // Whatever Better Auth answered was decided without the database: not a verdict on the session.
        if (fault) return databaseFaultResponse(fault);
        countOutcome(route, response.status);
        // A sign-up kept although its verification email was not sent (sent after the commit).
        if (mailFailed && response.ok && path === `${basePath}/sign-up/email` && auth.$context)
          return undoSignUp(auth as UserDeletingAuth, database.ctx, response);
        return withExposedCookies(typedTooManyRequests(response));
      },
    );
  };
}

/** An auth route path short and plain enough to name a span (anything else is "other"). */
const ROUTE_NAME = /^[a-z0-9/-]{0,64}$/;

/** Counts sign-ins by outcome, and rate-limit refusals of every auth route (the platform's metrics). */
function countOutcome(route: string, status: number): void {
  if (route.startsWith("/sign-in/")) {
    const outcome: AuthRouteOutcome =
      status < 300
        ? "ok"
        : status === 401
          ? "invalid_credentials"
          : status === 403
            ? "banned"
            : status === 429
              ? "rate_limited"
              : "error";
    countAuthOutcome("sign_in", outcome);
  } else if (status === 429) {
    countAuthOutcome("auth_route", "rate_limited");
  }
}

/**
 * The cross-origin rule of requirements §4.1, for every site the backend serves: each origin of
 * {@link trustedOriginsOf} (`SITE_URL`'s and `TRUSTED_ORIGINS`) is answered with itself, any other
 * with no CORS header at all; credentials allowed. Built per request from the env, so the matcher
 * is kept until the two settings change.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { authMiddleware, corsRule, type HttpEnv } from "service-auth/auth";
 * import type { HttpRoutes } from "service-auth/server";
 *
 * // Routes of the app's own router with the same cross-origin rule as authHttpRouter.
 * const router = new Hono<HttpEnv>().use(authMiddleware(createAuth));
 * const routes: HttpRoutes = { fetch: (request, ctx) => router.fetch(request, ctx), cors: corsRule };
 * ```
 */
export function corsRule(env: EnvReader): CorsPolicy {
  const key = `${env.get("SITE_URL") ?? ""}\n${env.get("PORT") ?? ""}\n${env.get(TRUSTED_ORIGINS_VAR) ?? ""}`;
  if (cachedCors?.key !== key) cachedCors = { key, policy: corsPolicy(originMatcher(trustedOriginsOf(env))) };
  return cachedCors.policy;
}

/** The platform's cross-origin rule type (`HttpRoutes.cors`'s result). */
type CorsPolicy = ReturnType<NonNullable<HttpRoutes["cors"]>>;

let cachedCors: { key: string; policy: CorsPolicy } | undefined;

function corsPolicy(origin: (origin: string) => string | null): CorsPolicy {
  return {
    origin,
    allowHeaders: ["Content-Type", "Authorization", "Service-Auth-Cookie"],
    exposeHeaders: ["Set-Service-Auth-Cookie"],
    allowMethods: ["GET", "POST", "OPTIONS"],
    credentials: true,
  };
}

/**
 * The platform HTTP routes: cross-origin rule, auth middleware, then the application's router.
 * `app` handlers get the action ctx as `c.env`.
 *
 * @example
 * ```ts
 * // http.ts
 * import "service-auth/auth/polyfill";
 * import { Hono } from "hono";
 * import { authHttpRouter, type HttpEnv } from "service-auth/auth";
 * import type { HttpRoutes } from "service-auth/server";
 * import { createAuth } from "./auth.ts";
 *
 * export default function routes(): HttpRoutes {
 *   const app = new Hono<HttpEnv>();
 *   app.get("/hello", (c) => c.text("hello"));
 *   return authHttpRouter({ createAuth, app });
 * }
 * ```
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
