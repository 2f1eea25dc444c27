/**
 * A proxy for the backend's auth endpoints mounted in a web app's server (Next.js route handlers,
 * SvelteKit's `handle`, TanStack Start server routes), for apps whose pages and auth share one
 * origin: each request under the auth prefix goes to the backend's same path with its method,
 * body, cookies and headers, and the answer comes back as is (status, body, every `Set-Cookie`,
 * redirects unfollowed). Framework-free: a `Request` in, a `Response` out.
 */
import { AUTH_PROXY_ERROR_CODES } from "./error-codes.ts";

/**
 * Options of {@link authProxy}: where the backend is, and which path prefix is proxied.
 * @example
 * ```ts
 * const options: AuthProxyOptions = {
 *   backendUrl: () => process.env.SERVICE_AUTH_URL ?? "http://127.0.0.1:3000",
 *   basePath: "/api/auth",
 * };
 * const proxy = authProxy(options);
 * ```
 */
export interface AuthProxyOptions {
  /** The backend URL without a trailing slash, read per request (so one build serves any backend). */
  backendUrl: () => string;
  /** Auth route prefix (default `/api/auth`). */
  basePath?: string;
  fetch?: typeof fetch;
}

/**
 * A request handler returned by {@link authProxy}: a `Request` for an auth route in, the backend's
 * `Response` out.
 * @example
 * ```ts
 * const proxy: AuthProxy = authProxy({ backendUrl: () => "http://127.0.0.1:3000" });
 * export const GET = (request: Request) => proxy(request);
 * export const POST = (request: Request) => proxy(request);
 * ```
 */
export type AuthProxy = (request: Request) => Promise<Response>;

/** Hop-by-hop headers (RFC 9110 §7.6.1) and what `fetch` sets itself: never forwarded. */
const REQUEST_HEADERS_NOT_FORWARDED = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
]);

/** `fetch` has already decoded the body, so its encoding and length no longer describe it. */
const RESPONSE_HEADERS_NOT_FORWARDED = new Set([
  ...REQUEST_HEADERS_NOT_FORWARDED,
  "content-encoding",
  "set-cookie", // appended one by one below: a joined header would merge cookies
]);

/**
 * The proxy's own answers, before the backend is asked: the statuses are this gateway's (the
 * platform's error registry is backend code, which the web app does not load; the proxy's own codes
 * are in `error-codes.ts`).
 */
const HTTP_NOT_FOUND = 404;

const notFound = () =>
  Response.json(
    { status: "error", code: "NOT_FOUND", message: "Not an auth route" },
    { status: HTTP_NOT_FOUND },
  );

/**
 * Whether `request` is for the proxied auth routes (under `basePath`).
 * @example
 * ```ts
 * const proxy = authProxy({ backendUrl: () => "http://127.0.0.1:3000" });
 * async function handle(request: Request, next: (r: Request) => Promise<Response>) {
 *   return isAuthRequest(request) ? proxy(request) : next(request);
 * }
 * ```
 */
export function isAuthRequest(request: Request, basePath = "/api/auth"): boolean {
  return new URL(request.url).pathname.startsWith(`${basePath.replace(/\/+$/, "")}/`);
}

/**
 * Creates a handler that forwards requests under `basePath` (default `/api/auth`) to the backend's
 * same path and returns its answer as is (status, body, every `Set-Cookie`); other paths get 404.
 * @example
 * ```ts
 * import { authProxy } from "service-auth/client";
 *
 * // app/api/auth/[...all]/route.ts (or any framework's route taking a Request)
 * const proxy = authProxy({ backendUrl: () => process.env.SERVICE_AUTH_URL ?? "http://127.0.0.1:3000" });
 * export const GET = proxy;
 * export const POST = proxy;
 * ```
 */
export function authProxy(options: AuthProxyOptions): AuthProxy {
  const basePath = (options.basePath ?? "/api/auth").replace(/\/+$/, "");
  return async (request) => {
    const incoming = new URL(request.url);
    // Only the auth routes: a handler mounted elsewhere must not open the rest of the backend.
    if (!incoming.pathname.startsWith(`${basePath}/`)) return notFound();
    const headers = new Headers();
    for (const [name, value] of request.headers) {
      if (!REQUEST_HEADERS_NOT_FORWARDED.has(name)) headers.append(name, value);
    }
    const hasBody = request.method !== "GET" && request.method !== "HEAD" && request.body !== null;
    let answer: Response;
    try {
      answer = await (options.fetch ?? fetch)(
        `${options.backendUrl()}${incoming.pathname}${incoming.search}`,
        {
          method: request.method,
          headers,
          // Streamed through: the backend applies its own body limits.
          body: hasBody ? request.body : undefined,
          redirect: "manual",
          signal: request.signal,
          ...(hasBody ? { duplex: "half" } : {}),
        } as RequestInit,
      );
    } catch {
      return Response.json(
        { status: "error", code: "BACKEND_UNREACHABLE", message: "The auth server cannot be reached" },
        { status: AUTH_PROXY_ERROR_CODES.BACKEND_UNREACHABLE.status },
      );
    }
    const out = new Headers();
    for (const [name, value] of answer.headers) {
      if (!RESPONSE_HEADERS_NOT_FORWARDED.has(name)) out.append(name, value);
    }
    for (const cookie of answer.headers.getSetCookie()) out.append("set-cookie", cookie);
    return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: out });
  };
}
