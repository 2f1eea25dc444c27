/**
 * The fast path of the function API: `POST /api/query|mutation|action` served straight from
 * `node:http`, without building a web `Request` with a streamed body (which costs several times
 * the database read). It only reads the request and writes the answer: the answer itself
 * (`function-call.ts`), the body limit (`body-limit.ts`), the CORS headers (`cors-policy.ts`) and
 * the Host rule (`host-check.ts`) are the Hono app's; answers are written together once per turn of
 * the event loop (`coalesced-writes.ts`). Every other request goes to the Hono app, and
 * so do function calls whose Host the adapter would refuse or lacks, or whose CORS rule throws.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { requestClientAddress } from "../client-address.ts";
import type { EnvReader } from "../functions/define.ts";
import { logger } from "../logger.ts";
import type { BackendRuntime } from "../runtime.ts";
import { BodyCollector, declaresTooLarge } from "./body-limit.ts";
import { CoalescedWrites } from "./coalesced-writes.ts";
import { type CorsPolicy, corsHeaders, type HeaderEntry } from "./cors-policy.ts";
import { type FunctionEndpointKind, handleFunctionCall, payloadTooLarge } from "./function-call.ts";
import { hostChecker } from "./host-check.ts";
import type { JsonResponse } from "./json-response.ts";

export interface FastApiOptions {
  /** Largest accepted request body in bytes; larger ones are answered 413 PAYLOAD_TOO_LARGE. */
  maxBodyBytes: number;
  /** The app's cross-origin rule for `/api/*` (`HttpRoutes.cors`), built from the env per request. */
  cors?: (env: EnvReader) => CorsPolicy;
}

/**
 * A Node request listener that answers the function endpoints itself and passes every other
 * request (preflights, `/healthz`, app routes, other methods and paths) to `fallback`.
 */
export function fastApiListener(
  backend: BackendRuntime,
  options: FastApiOptions,
  fallback: RequestListener,
): RequestListener {
  const { maxBodyBytes, cors } = options;
  const hostIsValid = hostChecker();
  // Answers are written together once per turn of the event loop (coalesced-writes.ts).
  const answers = new CoalescedWrites(send, (error, res: ServerResponse) => {
    logger.error("writing an API answer failed", { error: String(error) });
    res.destroy();
  });
  return (req, res) => {
    const kind = req.method === "POST" ? endpointOf(req.url) : undefined;
    if (kind === undefined || !hostIsValid(req.headers.host)) return fallback(req, res);
    const headers = readHeaders(req.rawHeaders);
    let cross: HeaderEntry[] | undefined;
    if (cors) {
      try {
        cross = corsHeaders(cors(backend.env), { origin: headers.origin ?? "", method: "POST" });
      } catch {
        // The rule threw: Hono answers (500 INTERNAL, logged), as it does for every other route.
        return fallback(req, res);
      }
    }
    serveFunctionCall(backend, kind, req, res, headers, maxBodyBytes, cross, answers);
  };
}

/** The endpoint a request target names, when it is exactly `/api/{kind}` (with any query string). */
export function endpointOf(url: string | undefined): FunctionEndpointKind | undefined {
  if (url === undefined || !url.startsWith("/api/")) return undefined;
  const q = url.indexOf("?");
  switch (q === -1 ? url : url.slice(0, q)) {
    case "/api/query":
      return "query";
    case "/api/mutation":
      return "mutation";
    case "/api/action":
      return "action";
    default:
      return undefined;
  }
}

interface RequestHeaders {
  authorization?: string;
  userAgent?: string;
  origin?: string;
  forwardedFor?: string;
  /** W3C Trace Context, for the call's span. */
  traceparent?: string;
  tracestate?: string;
}

/**
 * The request headers the endpoints read, with repeated headers joined by ", " as the web
 * `Headers.get` does (Node keeps only the first `Authorization`/`User-Agent`, which would differ).
 */
function readHeaders(raw: string[]): RequestHeaders {
  const out: RequestHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    let key: keyof RequestHeaders | undefined;
    if (name.length === 13 && name.toLowerCase() === "authorization") key = "authorization";
    else if (name.length === 10 && name.toLowerCase() === "user-agent") key = "userAgent";
    else if (name.length === 6 && name.toLowerCase() === "origin") key = "origin";
    else if (name.length === 15 && name.toLowerCase() === "x-forwarded-for") key = "forwardedFor";
    else if (name.length === 11 && name.toLowerCase() === "traceparent") key = "traceparent";
    else if (name.length === 10 && name.toLowerCase() === "tracestate") key = "tracestate";
    if (key) out[key] = out[key] === undefined ? raw[i + 1] : `${out[key]}, ${raw[i + 1]}`;
  }
  return out;
}

/** Reads the body (up to the limit), runs the function and answers; never throws. */
function serveFunctionCall(
  backend: BackendRuntime,
  kind: FunctionEndpointKind,
  req: IncomingMessage,
  res: ServerResponse,
  headers: RequestHeaders,
  maxBodyBytes: number,
  cors: HeaderEntry[] | undefined,
  answers: Answers,
): void {
  if (declaresTooLarge(req.headers["content-length"], req.headers["transfer-encoding"], maxBodyBytes)) {
    send(res, payloadTooLarge(maxBodyBytes), cors);
    return;
  }
  const body = new BodyCollector(maxBodyBytes);
  let settled = false;
  // The callbacks stay anonymous: tsx keeps function names, which costs a defineProperty per
  // named closure per request.
  req.on("data", (chunk: Buffer) => {
    if (settled) return;
    if (!body.add(chunk)) {
      settled = true;
      // The rest of the upload is discarded; the connection closes after the answer.
      send(res, payloadTooLarge(maxBodyBytes), cors);
    }
  });
  req.on("end", () => {
    if (settled) return;
    settled = true;
    void answer(backend, kind, req, res, headers, body.bytes(), cors, answers);
  });
  // An aborted upload is not JSON; the answer goes nowhere, as with Hono.
  req.on("error", () => {
    if (settled) return;
    settled = true;
    void answer(backend, kind, req, res, headers, undefined, cors, answers);
  });
}

async function answer(
  backend: BackendRuntime,
  kind: FunctionEndpointKind,
  req: IncomingMessage,
  res: ServerResponse,
  headers: RequestHeaders,
  body: Buffer | undefined,
  cors: HeaderEntry[] | undefined,
  answers: Answers,
): Promise<void> {
  const meta = {
    clientIp: requestClientAddress(backend.env, req.socket.remoteAddress, headers.forwardedFor),
    userAgent: headers.userAgent,
  };
  answers.push(res, await handleFunctionCall(backend, { kind, body, headers, meta }), cors);
}

/** The listener's queue of answers to write. */
type Answers = CoalescedWrites<ServerResponse, JsonResponse, HeaderEntry[] | undefined>;

/**
 * Writes an answer: its headers with the CORS ones (then sorted by name, as the adapter writes a
 * Hono response's), and its length.
 */
function send(res: ServerResponse, response: JsonResponse, cors: HeaderEntry[] | undefined): void {
  if (res.headersSent || res.destroyed) return;
  // A flat name/value list: Node writes it as given, without walking an object's keys.
  const headers: string[] = [];
  if (cors === undefined || cors.length === 0) {
    for (const name in response.headers) headers.push(name, response.headers[name]);
  } else {
    const entries: HeaderEntry[] = [...cors];
    for (const name in response.headers) entries.push([name, response.headers[name]]);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [name, value] of entries) headers.push(name, value);
  }
  headers.push("content-length", String(Buffer.byteLength(response.body)));
  res.writeHead(response.status, headers);
  res.end(response.body);
}
