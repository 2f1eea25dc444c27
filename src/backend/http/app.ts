/**
 * The HTTP transport: `POST /api/query|mutation|action` with `{path, args}`, `GET /healthz`, and
 * the application's own routes (a Hono app or anything with `fetch(request, ctx)`).
 */
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ServiceError } from "../errors.ts";
import type { ActionCtx, EnvReader, RequestMeta } from "../functions/define.ts";
import { logger } from "../logger.ts";
import type { Backend, Caller } from "../runtime.ts";

export type CorsOptions = NonNullable<Parameters<typeof cors>[0]>;

/** Application routes: a Hono app whose handlers get the action ctx as `c.env`. */
export interface HttpRoutes {
  fetch(request: Request, ctx: ActionCtx): Response | Promise<Response>;
  /**
   * Cross-origin rule for every `/api/*` path, the platform's own endpoints included (so a
   * browser on another origin can call `/api/query` too). Built from the env on each request.
   */
  cors?: (env: EnvReader) => CorsOptions;
}

export interface HttpAppOptions {
  routes?: HttpRoutes;
  /** Largest accepted request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Reads the client address of a request (the Node server knows the socket). */
  clientIp?: (request: Request, env: unknown) => string | undefined;
}

/** The bearer token of an `Authorization` header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** The JSON error body and status for any thrown value; internal errors are logged, not shown. */
export function errorResponse(
  error: unknown,
  requestId: string,
): { status: number; body: Record<string, unknown> } {
  if (error instanceof ServiceError) {
    const body: Record<string, unknown> = { status: "error", code: error.code, message: error.message };
    if (error.data !== undefined && error.code !== "UNAUTHORIZED") body.data = error.data;
    return { status: error.status, body };
  }
  logger.error("internal error", {
    requestId,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  return {
    status: 500,
    body: { status: "error", code: "INTERNAL", message: `Internal server error (request ${requestId})` },
  };
}

/** The platform's function endpoints: `POST /api/{kind}`. */
export type FunctionEndpointKind = "query" | "mutation" | "action";

/** Message of the 400 answered when a function call's body is not JSON. */
export const NOT_JSON_MESSAGE = "Request body must be JSON";

/** The JSON body of the 413 answered when a request body exceeds `maxBodyBytes`. */
export function payloadTooLargeBody(maxBodyBytes: number): Record<string, unknown> {
  return {
    status: "error",
    code: "PAYLOAD_TOO_LARGE",
    message: `Request body exceeds ${maxBodyBytes} bytes`,
  };
}

/**
 * Runs the function named by a parsed `POST /api/{kind}` body (`{path, args}`) and returns its
 * value. Shared by the Hono route and the Node fast path so both answer exactly alike; throws a
 * `ServiceError` (400 BAD_REQUEST for a body of the wrong shape) or whatever the function throws.
 */
export async function runFunctionRequest(
  backend: Backend,
  kind: FunctionEndpointKind,
  body: unknown,
  caller: Caller,
): Promise<unknown> {
  if (typeof body !== "object" || body === null || typeof (body as any).path !== "string") {
    throw new ServiceError("BAD_REQUEST", 'Request body must be {"path": "module:name", "args": {...}}');
  }
  const { path, args } = body as { path: string; args?: unknown };
  if (kind === "query") return (await backend.runQuery(path, args, caller)).value;
  if (kind === "mutation") return (await backend.runMutation(path, args, caller)).value;
  return backend.runAction(path, args, caller);
}

export function createHttpApp(backend: Backend, options: HttpAppOptions = {}): Hono {
  const app = new Hono();
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;

  const meta = (request: Request, env: unknown): RequestMeta => ({
    clientIp: options.clientIp?.(request, env),
    userAgent: request.headers.get("user-agent") ?? undefined,
  });

  const corsRule = options.routes?.cors;
  if (corsRule) {
    app.use("/api/*", (c, next) => cors(corsRule(backend.env))(c, next));
  }

  app.get("/healthz", async (c) => {
    try {
      await backend.engine.ping();
      // PostgreSQL: how other instances' commits reach this one ("listening", "reconnecting", "polling").
      const commits = backend.engine.commitChannel?.();
      return c.json(commits ? { status: "ok", commits } : { status: "ok" });
    } catch {
      return c.json({ status: "error", code: "DATABASE_UNREACHABLE" }, 503);
    }
  });

  for (const kind of ["query", "mutation", "action"] as const) {
    app.post(
      `/api/${kind}`,
      bodyLimit({
        maxSize: maxBodyBytes,
        onError: (c) => {
          // The rest of the body is never read, so the connection cannot be reused for another request.
          c.header("Connection", "close");
          return c.json(payloadTooLargeBody(maxBodyBytes), 413);
        },
      }),
      async (c) => {
        try {
          let body: unknown;
          try {
            body = await c.req.json();
          } catch {
            throw new ServiceError("BAD_REQUEST", NOT_JSON_MESSAGE);
          }
          const caller = { token: bearerToken(c.req.header("authorization")), meta: meta(c.req.raw, c.env) };
          return c.json({ status: "success", value: await runFunctionRequest(backend, kind, body, caller) });
        } catch (error) {
          const { status, body } = errorResponse(error, randomUUID());
          return c.json(body, status as ContentfulStatusCode);
        }
      },
    );
  }

  const routes = options.routes;
  app.all("*", async (c) => {
    if (!routes) return c.json({ status: "error", code: "NOT_FOUND", message: "Not found" }, 404);
    const requestId = randomUUID();
    try {
      const ctx = await backend.actionCtx(
        { token: bearerToken(c.req.header("authorization")), meta: meta(c.req.raw, c.env) },
        false,
      );
      return await routes.fetch(c.req.raw, ctx);
    } catch (error) {
      const { status, body } = errorResponse(error, requestId);
      return c.json(body, status as ContentfulStatusCode);
    }
  });

  app.onError((error, c) => {
    const { status, body } = errorResponse(error, randomUUID());
    return c.json(body, status as ContentfulStatusCode);
  });
  return app;
}
