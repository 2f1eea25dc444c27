/**
 * The HTTP transport as a Hono app: `POST /api/query|mutation|action` (answered by
 * `function-call.ts`), `GET /healthz`, and the application's own routes (a Hono app or anything
 * with `fetch(request, ctx)`). The Node server serves the function calls on a faster path
 * (`fast-api.ts`) with the same modules, so both answer alike.
 *
 * Every route has the body limit; a body declared JSON that is not JSON is answered 400 before any
 * route sees it; every `/api/*` answer gets `Cache-Control: no-store` and `nosniff`.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { AppError, httpStatusOf } from "../errors.ts";
import type { ActionCtx, EnvReader, RequestMeta } from "../functions/define.ts";
import type { BackendRuntime } from "../runtime.ts";
import { bearerToken } from "./bearer-token.ts";
import {
  DEFAULT_MAX_BODY_BYTES,
  isJsonContentType,
  readWebBody,
  TOO_LARGE,
  withBodyLimit,
} from "./body-limit.ts";
import { type CorsPolicy, corsHeaders } from "./cors-policy.ts";
import {
  FUNCTION_ENDPOINT_KINDS,
  handleFunctionCall,
  NOT_JSON_MESSAGE,
  payloadTooLarge,
} from "./function-call.ts";
import { API_HEADERS, errorResponse, type JsonResponse, jsonResponse } from "./json-response.ts";

/**
 * Application routes: a Hono app whose handlers get the action ctx as `c.env`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import type { ActionCtx, HttpRoutes } from "service-auth/server";
 *
 * const app = new Hono<{ Bindings: ActionCtx }>();
 * app.get("/hello", (c) => c.text(`hello from ${c.env.meta.clientIp ?? "somewhere"}`));
 *
 * const routes: HttpRoutes = app;
 * await startService({ schema, modules, routes });
 * ```
 */
export interface HttpRoutes {
  fetch(request: Request, ctx: ActionCtx): Response | Promise<Response>;
  /**
   * Cross-origin rule for every `/api/*` path, the platform's own endpoints included (so a
   * browser on another origin can call `/api/query` too). Built from the env on each request.
   */
  cors?: (env: EnvReader) => CorsPolicy;
}

export interface HttpAppOptions {
  routes?: HttpRoutes;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Reads the client address of a request (the Node server knows the socket). */
  clientIp?: (request: Request, env: unknown) => string | undefined;
  /** Whether shutdown has begun (the Node server's drain knows): `/healthz` then answers 503. */
  draining?: () => boolean;
}

export function createHttpApp(backend: BackendRuntime, options: HttpAppOptions = {}): Hono {
  const app = new Hono();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  const meta = (request: Request, env: unknown): RequestMeta => ({
    clientIp: options.clientIp?.(request, env),
    userAgent: request.headers.get("user-agent") ?? undefined,
  });

  app.use("/api/*", apiHeaders);

  const corsRule = options.routes?.cors;
  if (corsRule)
    app.use(
      "/api/*",
      corsMiddleware(() => corsRule(backend.env)),
    );

  app.get("/healthz", async (c) => {
    // Load balancers take a draining instance out of rotation while it finishes what it accepted.
    if (options.draining?.()) {
      const code = "DRAINING";
      return send(c, jsonResponse(httpStatusOf(code), { status: "draining", code }));
    }
    try {
      await backend.engine.ping();
      // PostgreSQL: how other instances' commits reach this one ("listening", "reconnecting", "polling").
      const commits = backend.engine.commitChannel?.();
      return c.json(commits ? { status: "ok", commits } : { status: "ok" });
    } catch {
      const code = "DATABASE_UNREACHABLE";
      return send(c, jsonResponse(httpStatusOf(code), { status: "error", code }));
    }
  });

  for (const kind of FUNCTION_ENDPOINT_KINDS) {
    app.post(`/api/${kind}`, async (c) => {
      const body = await readWebBody(c.req.raw, maxBodyBytes);
      if (body === TOO_LARGE) return send(c, payloadTooLarge(maxBodyBytes));
      const answer = await handleFunctionCall(backend, {
        kind,
        body,
        headers: {
          authorization: c.req.header("authorization"),
          traceparent: c.req.header("traceparent"),
          tracestate: c.req.header("tracestate"),
        },
        meta: meta(c.req.raw, c.env),
      });
      return send(c, answer);
    });
  }

  const routes = options.routes;
  app.all("*", async (c) => {
    if (!routes) return send(c, errorResponse(new AppError("NOT_FOUND", "Not found")));
    const request = await withBodyLimit(c.req.raw, maxBodyBytes);
    if (request === TOO_LARGE) return send(c, payloadTooLarge(maxBodyBytes));
    if (request === undefined || (await declaresJsonButIsNot(request))) {
      return send(c, errorResponse(new AppError("BAD_REQUEST", NOT_JSON_MESSAGE)));
    }
    try {
      const ctx = await backend.actionCtx(
        { token: bearerToken(c.req.header("authorization")), meta: meta(c.req.raw, c.env) },
        false,
      );
      return await routes.fetch(request, ctx);
    } catch (error) {
      return send(c, errorResponse(error));
    }
  });

  app.onError((error, c) => send(c, errorResponse(error)));
  return app;
}

/**
 * A request whose `Content-Type` says JSON but whose (non-empty) body does not parse: refused here
 * so no route answers it with a 500 (Better Auth does) or logs a stack trace.
 */
async function declaresJsonButIsNot(request: Request): Promise<boolean> {
  if (request.body === null || !isJsonContentType(request.headers.get("content-type"))) return false;
  const text = await request.clone().text();
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

/**
 * `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` on every `/api/*` answer (it may
 * carry user data, a session or a token), unless the route chose its own caching.
 */
const apiHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const missing = Object.entries(API_HEADERS).filter(([name]) => !c.res.headers.has(name));
  if (missing.length === 0) return;
  try {
    for (const [name, value] of missing) c.res.headers.set(name, value);
  } catch {
    // Immutable headers (e.g. a `Response.redirect`): copy the response.
    const res = new Response(c.res.body, c.res);
    for (const [name, value] of missing) res.headers.set(name, value);
    c.res = res;
  }
};

function send(c: Context, response: JsonResponse): Response {
  return c.body(response.body, response.status as ContentfulStatusCode, { ...response.headers });
}

/**
 * Applies a cross-origin rule (built per request) as `hono/cors` did: a preflight (`OPTIONS`) is
 * answered 204 at once; other requests get the headers, `Vary` last, on whatever the route answers.
 */
function corsMiddleware(policy: () => CorsPolicy): MiddlewareHandler {
  return async (c, next) => {
    const headers = corsHeaders(policy(), {
      origin: c.req.header("origin") ?? "",
      method: c.req.method,
      requestHeaders: c.req.header("access-control-request-headers"),
    });
    if (c.req.method === "OPTIONS") return new Response(null, { status: 204, headers });
    let vary: string | undefined;
    for (const [name, value] of headers) {
      if (name === "vary") vary = value;
      else c.res.headers.set(name, value);
    }
    await next();
    if (vary) c.header("Vary", vary, { append: true });
  };
}
