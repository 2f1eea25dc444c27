/**
 * The cross-origin rule of `/api/*`: which CORS headers answer a request with a given `Origin` and
 * method. Both the Hono middleware and the Node fast path take their headers from here. The
 * headers are those of `hono/cors` (which this replaces), so existing rules behave as before.
 */

/** A cross-origin rule, with the option names of `hono/cors`. */
export interface CorsPolicy {
  /**
   * Origins allowed to read responses: `"*"` (the default), one origin, a list, or a function
   * returning the origin to allow (or null) for a request's `Origin` (`""` when absent).
   */
  origin?: string | readonly string[] | ((origin: string) => string | null | undefined);
  /** Methods a preflight allows (default GET, HEAD, PUT, POST, DELETE, PATCH, QUERY). */
  allowMethods?: readonly string[];
  /** Headers a preflight allows; by default those the preflight asks for. */
  allowHeaders?: readonly string[];
  /** Response headers cross-origin scripts may read. */
  exposeHeaders?: readonly string[];
  /** How long (seconds) browsers may cache a preflight's answer. */
  maxAge?: number;
  /** Whether requests with credentials (cookies) may be read cross-origin. */
  credentials?: boolean;
}

/** The parts of a request the rule looks at. */
export interface CorsRequest {
  /** The `Origin` header, `""` when absent. */
  origin: string;
  method: string;
  /** `Access-Control-Request-Headers` of a preflight. */
  requestHeaders?: string;
}

/** A response header as `[lower-case name, value]`. */
export type HeaderEntry = [name: string, value: string];

const DEFAULT_METHODS = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "QUERY"];

/**
 * The CORS headers for a request. For any method but `OPTIONS` they end with `vary` when the
 * answer depends on the origin; an `OPTIONS` request is a preflight, answered 204 with these
 * headers alone.
 */
export function corsHeaders(policy: CorsPolicy, request: CorsRequest): HeaderEntry[] {
  const rule = policy.origin ?? "*";
  const allowOrigin = allowedOrigin(rule, request.origin);
  const headers: HeaderEntry[] = [];
  if (allowOrigin) headers.push(["access-control-allow-origin", allowOrigin]);
  if (policy.credentials) headers.push(["access-control-allow-credentials", "true"]);
  if (policy.exposeHeaders?.length)
    headers.push(["access-control-expose-headers", policy.exposeHeaders.join(",")]);
  const vary: string[] = rule === "*" ? [] : ["Origin"];
  if (request.method === "OPTIONS") {
    if (policy.maxAge != null) headers.push(["access-control-max-age", String(policy.maxAge)]);
    const methods = (policy.allowMethods ?? DEFAULT_METHODS).join(",");
    if (methods) headers.push(["access-control-allow-methods", methods]);
    // Without a list, the headers the browser asks for are allowed.
    const allowed = policy.allowHeaders?.length
      ? policy.allowHeaders.join(",")
      : request.requestHeaders
          ?.split(",")
          .map((h) => h.trim())
          .join(",");
    if (allowed) {
      headers.push(["access-control-allow-headers", allowed]);
      vary.push("Access-Control-Request-Headers");
    }
  }
  if (vary.length) headers.push(["vary", vary.join(", ")]);
  return headers;
}

function allowedOrigin(rule: NonNullable<CorsPolicy["origin"]>, origin: string): string | null | undefined {
  if (rule === "*") return "*";
  if (typeof rule === "string") return rule === origin ? origin : null;
  if (typeof rule === "function") return rule(origin);
  return rule.includes(origin) ? origin : null;
}
