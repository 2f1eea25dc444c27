/**
 * OpenTelemetry traces through `@opentelemetry/api`: a span per function call (HTTP and WebSocket)
 * with child spans for step 1 (JWT verification), step 2 (identity resolution) and the database
 * transaction, and a span per auth route. Nothing is recorded until the app registers an
 * OpenTelemetry SDK; until then each call starts one non-recording span, sees that it does not
 * record, and creates nothing else.
 *
 * The parent of a call's span is the span active in the caller's context (an HTTP instrumentation's,
 * when the app has one), else the remote parent of the request's W3C `traceparent` / `tracestate`,
 * read with the registered propagator (the SDKs register the W3C Trace Context one by default).
 * Children get their parent passed explicitly, so they nest without a context manager too.
 */
import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AppError } from "../errors.ts";

const tracer = trace.getTracer("service-auth");

/** A recording span and the context its children start in. */
export interface TraceParent {
  span: Span;
  ctx: Context;
}

/** The propagation headers of a request (lower-case names, as W3C Trace Context reads them). */
export interface TraceHeaders {
  traceparent?: string | null;
  tracestate?: string | null;
}

/** Options of a request's span; callers with attributes pass {@link serverSpan}'s, made once. */
const SERVER_SPAN: SpanOptions = Object.freeze({ kind: SpanKind.SERVER });

/** Span options of a server span with fixed attributes (build once, pass to {@link startRequestSpan}). */
export function serverSpan(attributes: Attributes): SpanOptions {
  return { kind: SpanKind.SERVER, attributes };
}

/** The context a request's span starts in: the active span's, else the headers' remote parent. */
function parentContext(headers: TraceHeaders | undefined): Context {
  const active = context.active();
  if (headers?.traceparent && trace.getSpan(active) === undefined)
    return propagation.extract(active, headers);
  return active;
}

/**
 * Starts a server span for one request (a function call, an auth route); undefined when nothing
 * records it (no SDK registered, or not sampled): callers then skip every child span.
 */
export function startRequestSpan(
  name: string,
  headers: TraceHeaders | undefined,
  options: SpanOptions = SERVER_SPAN,
): TraceParent | undefined {
  const parent = parentContext(headers);
  const span = tracer.startSpan(name, options, parent);
  if (!span.isRecording()) return undefined;
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Runs `fn` with `parent` as the active context (so a registered context manager nests inner work). */
export function withTraceContext<T>(parent: TraceParent, fn: () => T): T {
  return context.with(parent.ctx, fn);
}

/** Ends a span, marking it failed when `error` is given (with its code, never its data). */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) endFailed(span, error instanceof AppError ? error.code : "INTERNAL");
  else span.end();
}

/** Ends a span as failed with an error code (a code of the error registry). */
export function endFailed(span: Span, code: string): void {
  span.setAttribute("service_auth.error_code", code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.end();
}

/** A child span of `parent` around the promise `run` returns. */
export function inChildSpan<T>(parent: TraceParent, name: string, run: () => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent.ctx);
  let running: Promise<T>;
  try {
    running = run();
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
  return running.then(
    (value) => {
      endSpan(span);
      return value;
    },
    (error: unknown) => {
      endSpan(span, error);
      throw error;
    },
  );
}

/**
 * Runs an HTTP route handler in a server span named `name` (e.g. the auth routes): the parent is
 * taken as for function calls, the handler runs in the span's context, the answer's status is
 * recorded. Without an SDK it only starts and drops one non-recording span.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { traceHttpRoute } from "service-auth/server";
 *
 * const app = new Hono();
 * app.post("/webhooks/billing", (c) =>
 *   traceHttpRoute("POST /webhooks/billing", c.req.raw, async () => new Response(null, { status: 204 })),
 * );
 * ```
 */
export async function traceHttpRoute(
  name: string,
  request: Request,
  handler: () => Promise<Response>,
): Promise<Response> {
  const traced = startRequestSpan(name, {
    traceparent: request.headers.get("traceparent"),
    tracestate: request.headers.get("tracestate"),
  });
  if (!traced) return handler();
  traced.span.setAttribute("http.request.method", request.method);
  traced.span.setAttribute("url.path", new URL(request.url).pathname);
  try {
    const response = await withTraceContext(traced, handler);
    traced.span.setAttribute("http.response.status_code", response.status);
    if (response.status >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR });
    endSpan(traced.span);
    return response;
  } catch (error) {
    endSpan(traced.span, error);
    throw error;
  }
}
