/**
 * The function endpoints `POST /api/query|mutation|action` with `{path, args}`, independent of the
 * transport: the Hono route and the Node fast path read the request their own way, hand the body
 * bytes over here, and write back the answer they get, so both answer byte for byte alike.
 */
import { AppError } from "../errors.ts";
import type { RequestMeta } from "../functions/define.ts";
import { observeCall, outcomeOf } from "../metrics/metrics.ts";
import type { BackendRuntime, Caller } from "../runtime.ts";
import { endSpan, startRequestSpan, type TraceHeaders, withTraceContext } from "../tracing/tracing.ts";
import { bearerToken } from "./bearer-token.ts";
import { errorResponse, JSON_HEADERS, type JsonResponse, jsonResponse } from "./json-response.ts";

/** The platform's function endpoints: `POST /api/{kind}`. */
export type FunctionEndpointKind = "query" | "mutation" | "action";

export const FUNCTION_ENDPOINT_KINDS: readonly FunctionEndpointKind[] = ["query", "mutation", "action"];

/** A function call as a transport received it. */
export interface FunctionCallRequest {
  kind: FunctionEndpointKind;
  /** The whole request body (within the limit); undefined when the upload failed. */
  body: Uint8Array | undefined;
  /**
   * The request headers the endpoint reads, repeated ones joined by ", " as web `Headers` do:
   * the bearer token and W3C Trace Context's `traceparent` / `tracestate`.
   */
  headers: { authorization?: string | null } & TraceHeaders;
  meta: RequestMeta;
}

/** Message of the 400 answered when a function call's body is not JSON. */
export const NOT_JSON_MESSAGE = "Request body must be JSON";

/**
 * Runs the function a request names and answers `{status: "success", value}`, or the error as
 * `errorResponse` shows it (400 BAD_REQUEST for a body that is not JSON or not `{path, args}`).
 * Never throws.
 */
export async function handleFunctionCall(
  backend: BackendRuntime,
  request: FunctionCallRequest,
): Promise<JsonResponse> {
  const startedAt = performance.now();
  const { kind } = request;
  // Undefined unless an OpenTelemetry SDK records this call.
  const traced = startRequestSpan(kind, request.headers);
  let fn = "unknown";
  try {
    const { path, args } = parseCall(request.body);
    fn = backend.functionLabel(path);
    const caller: Caller = { token: bearerToken(request.headers.authorization), meta: request.meta };
    let value: unknown;
    if (traced) {
      traced.span.updateName(`${kind} ${fn}`);
      traced.span.setAttribute("service_auth.function", fn);
      caller.trace = traced;
      value = await withTraceContext(traced, () => run(backend, kind, path, args, caller));
    } else {
      value = await run(backend, kind, path, args, caller);
    }
    // Serialized inside the try: a value JSON cannot hold is an internal error.
    const answer = jsonResponse(200, { status: "success", value });
    observeCall("http", kind, fn, "ok", startedAt);
    if (traced) endSpan(traced.span);
    return answer;
  } catch (error) {
    observeCall("http", kind, fn, outcomeOf(error), startedAt);
    if (traced) endSpan(traced.span, error);
    return errorResponse(error);
  }
}

/** The 413 answered when a request body exceeds `maxBodyBytes`. */
export function payloadTooLarge(maxBodyBytes: number): JsonResponse {
  return jsonResponse(
    413,
    { status: "error", code: "PAYLOAD_TOO_LARGE", message: `Request body exceeds ${maxBodyBytes} bytes` },
    // The rest of the body is never read, so the connection cannot be reused for another request.
    TOO_LARGE_HEADERS,
  );
}

const TOO_LARGE_HEADERS = Object.freeze({ ...JSON_HEADERS, connection: "close" });

function parseCall(body: Uint8Array | undefined): { path: string; args: unknown } {
  let parsed: unknown;
  try {
    if (body === undefined) throw new Error("upload failed");
    parsed = JSON.parse(decodeUtf8(body));
  } catch {
    throw new AppError("BAD_REQUEST", NOT_JSON_MESSAGE);
  }
  if (typeof parsed !== "object" || parsed === null || typeof (parsed as any).path !== "string") {
    throw new AppError("BAD_REQUEST", 'Request body must be {"path": "module:name", "args": {...}}');
  }
  return parsed as { path: string; args: unknown };
}

/** Text of a UTF-8 body as `Request.json()` decodes it: a leading byte order mark is dropped. */
function decodeUtf8(body: Uint8Array): string {
  const text = (
    Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  ).toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

async function run(
  backend: BackendRuntime,
  kind: FunctionEndpointKind,
  path: string,
  args: unknown,
  caller: Caller,
): Promise<unknown> {
  if (kind === "query") return (await backend.runQuery(path, args, caller)).value;
  if (kind === "mutation") return (await backend.runMutation(path, args, caller)).value;
  return backend.runAction(path, args, caller);
}
