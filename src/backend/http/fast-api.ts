/**
 * The fast path of the function API: `POST /api/query|mutation|action` served straight from
 * `node:http`, without building a web `Request` with a streamed body (which costs several times
 * the database read). Every other request goes to the Hono app. Answers are the same as the Hono
 * route's (status, JSON body, CORS headers); anything the fast path cannot reproduce exactly
 * (a host header Hono would refuse, a CORS origin given as a function) is handed to Hono too.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { ServiceError } from "../errors.ts";
import type { EnvReader } from "../functions/define.ts";
import type { Backend } from "../runtime.ts";
import {
  bearerToken,
  type CorsOptions,
  errorResponse,
  type FunctionEndpointKind,
  NOT_JSON_MESSAGE,
  payloadTooLargeBody,
  runFunctionRequest,
} from "./app.ts";

export interface FastApiOptions {
  /** Largest accepted request body in bytes; larger ones are answered 413 PAYLOAD_TOO_LARGE. */
  maxBodyBytes: number;
  /** The app's cross-origin rule for `/api/*` (`HttpRoutes.cors`), built from the env per request. */
  cors?: (env: EnvReader) => CorsOptions;
}

/**
 * A Node request listener that answers the function endpoints itself and passes every other
 * request (preflights, `/healthz`, app routes, other methods and paths) to `fallback`.
 */
export function fastApiListener(
  backend: Backend,
  options: FastApiOptions,
  fallback: RequestListener,
): RequestListener {
  const { maxBodyBytes, cors } = options;
  const hostIsValid = hostValidator();
  return (req, res) => {
    const kind = req.method === "POST" ? endpointOf(req.url) : undefined;
    if (kind === undefined || !hostIsValid(req.headers.host)) return fallback(req, res);
    const headers = readHeaders(req.rawHeaders);
    let corsHeaders: Array<[string, string]> | undefined;
    if (cors) {
      try {
        corsHeaders = corsResponseHeaders(cors(backend.env), headers.origin ?? "");
      } catch {
        corsHeaders = undefined;
      }
      // Not reproducible here (or the rule threw): Hono answers, exactly as it always did.
      if (corsHeaders === undefined) return fallback(req, res);
    }
    serveFunctionCall(backend, kind, req, res, headers, maxBodyBytes, corsHeaders);
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

/**
 * Whether @hono/node-server would accept this Host header (it answers 400 otherwise). Hosts are
 * few, so the verdicts are cached.
 */
function hostValidator(): (host: string | undefined) => boolean {
  const verdicts = new Map<string, boolean>();
  return (host) => {
    // No host: the adapter falls back to the listen hostname; let it.
    if (!host) return false;
    let ok = verdicts.get(host);
    if (ok === undefined) {
      try {
        const { hostname } = new URL(`http://${host}/`);
        ok = hostname.length === host.length || hostname === host.replace(/:\d+$/, "");
      } catch {
        ok = false;
      }
      if (verdicts.size < 256) verdicts.set(host, ok);
    }
    return ok;
  };
}

interface RequestHeaders {
  authorization?: string;
  userAgent?: string;
  origin?: string;
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
    if (key) out[key] = out[key] === undefined ? raw[i + 1] : `${out[key]}, ${raw[i + 1]}`;
  }
  return out;
}

/**
 * The headers `hono/cors` adds to the response of a non-preflight request with this `Origin`
 * (`""` when absent), in the order @hono/node-server writes them; undefined when the rule's origin
 * is a function (it may depend on the Hono context, so only Hono can apply it).
 */
export function corsResponseHeaders(
  options: CorsOptions,
  requestOrigin: string,
): Array<[string, string]> | undefined {
  const origin = options.origin ?? "*";
  let allowOrigin: string | null | undefined;
  if (typeof origin === "string")
    allowOrigin = origin === "*" ? "*" : origin === requestOrigin ? requestOrigin : null;
  else if (Array.isArray(origin)) allowOrigin = origin.includes(requestOrigin) ? requestOrigin : null;
  else return undefined;
  const headers: Array<[string, string]> = [];
  if (options.credentials) headers.push(["access-control-allow-credentials", "true"]);
  if (allowOrigin) headers.push(["access-control-allow-origin", allowOrigin]);
  if (options.exposeHeaders?.length)
    headers.push(["access-control-expose-headers", options.exposeHeaders.join(",")]);
  if (origin !== "*") headers.push(["vary", "Origin"]);
  return headers;
}

/** Reads the body (up to the limit), runs the function and answers; never throws. */
function serveFunctionCall(
  backend: Backend,
  kind: FunctionEndpointKind,
  req: IncomingMessage,
  res: ServerResponse,
  headers: RequestHeaders,
  maxBodyBytes: number,
  cors: Array<[string, string]> | undefined,
): void {
  // Like hono/body-limit: a declared length over the limit is refused before reading anything.
  const declared = req.headers["content-length"];
  if (declared !== undefined && req.headers["transfer-encoding"] === undefined) {
    if (Number.parseInt(declared, 10) > maxBodyBytes) return void tooLarge(res, maxBodyBytes, cors);
  }
  // Small bodies arrive in one chunk: keep it as is, collect only when a second one comes.
  let first: Buffer | undefined;
  let more: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  // The callbacks stay anonymous: tsx keeps function names, which costs a defineProperty per
  // named closure per request.
  req.on("data", (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > maxBodyBytes) {
      settled = true;
      // The rest of the upload is discarded; the connection closes after the answer.
      tooLarge(res, maxBodyBytes, cors);
      return;
    }
    if (first === undefined) first = chunk;
    else if (more === undefined) more = [first, chunk];
    else more.push(chunk);
  });
  req.on("end", () => {
    if (settled) return;
    settled = true;
    const body = more ? Buffer.concat(more, size) : (first ?? EMPTY_BODY);
    void answer(backend, kind, req, res, headers, body, cors);
  });
  // An aborted upload is not JSON; the answer goes nowhere, as with Hono.
  req.on("error", () => {
    if (settled) return;
    settled = true;
    void answer(backend, kind, req, res, headers, undefined, cors);
  });
}

const EMPTY_BODY = Buffer.alloc(0);

async function answer(
  backend: Backend,
  kind: FunctionEndpointKind,
  req: IncomingMessage,
  res: ServerResponse,
  headers: RequestHeaders,
  body: Buffer | undefined,
  cors: Array<[string, string]> | undefined,
): Promise<void> {
  let status = 200;
  let json: string;
  try {
    let parsed: unknown;
    try {
      if (body === undefined) throw new Error("aborted");
      parsed = JSON.parse(decodeUtf8(body));
    } catch {
      throw new ServiceError("BAD_REQUEST", NOT_JSON_MESSAGE);
    }
    const caller = {
      token: bearerToken(headers.authorization),
      meta: { clientIp: req.socket.remoteAddress, userAgent: headers.userAgent },
    };
    // Serialized inside the try: a value JSON cannot hold is an internal error, as with c.json.
    json = JSON.stringify({
      status: "success",
      value: await runFunctionRequest(backend, kind, parsed, caller),
    });
  } catch (error) {
    const failure = errorResponse(error, randomUUID());
    status = failure.status;
    json = JSON.stringify(failure.body);
  }
  send(res, status, json, cors, false);
}

/** Text of a UTF-8 body as `Request.json()` decodes it: a leading byte order mark is dropped. */
function decodeUtf8(body: Buffer): string {
  const text = body.toString("utf8");
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function tooLarge(
  res: ServerResponse,
  maxBodyBytes: number,
  cors: Array<[string, string]> | undefined,
): void {
  send(res, 413, JSON.stringify(payloadTooLargeBody(maxBodyBytes)), cors, true);
}

/** Writes the answer with the headers (names, order) the Hono route produced. */
function send(
  res: ServerResponse,
  status: number,
  json: string,
  cors: Array<[string, string]> | undefined,
  close: boolean,
): void {
  if (res.headersSent || res.destroyed) return;
  const length = String(Buffer.byteLength(json));
  let headers: string[];
  if (cors === undefined) {
    // A flat name/value list: Node writes it as given, without walking an object's keys.
    headers = close
      ? ["connection", "close", "content-type", "application/json", "Content-Length", length]
      : ["Content-Type", "application/json", "Content-Length", length];
  } else {
    const entries: Array<[string, string]> = [...cors, ["content-type", "application/json"]];
    if (close) entries.push(["connection", "close"]);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    headers = [];
    for (const [name, value] of entries) headers.push(name, value);
    headers.push("content-length", length);
  }
  res.writeHead(status, headers);
  res.end(json);
}
