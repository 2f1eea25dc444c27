/**
 * Server-side rendering helpers (requirements §1.9): get a JWT for the incoming request (the cached
 * `service-auth.jwt` cookie while it is fresh, else a new one from the token endpoint), run
 * functions over HTTP with it, and preload query results the browser hydrates and subscribes to.
 */
import type { FunctionReference } from "../backend/functions/references.ts";
import { functionPath } from "./function-path.ts";
import { isFresh } from "./jwt-claims.ts";

/**
 * The name of the cookie caching the backend JWT (`__Secure-service-auth.jwt` on https).
 * @example
 * ```ts
 * // A request that already carries a cached JWT:
 * const cookies = request.headers.get("cookie") ?? "";
 * const hasCachedJwt = cookies.includes(`${JWT_COOKIE}=`);
 * ```
 */
export const JWT_COOKIE = "service-auth.jwt";

/**
 * Options of {@link getRequestToken}: the backend URL, whether to use the cookie's cached JWT, and
 * the auth route prefix.
 * @example
 * ```ts
 * const options: ServerAuthOptions = { url: "http://127.0.0.1:3000", cache: true };
 * const { token } = await getRequestToken(request.headers, options);
 * ```
 */
export interface ServerAuthOptions {
  /** Base URL of the backend, e.g. `http://localhost:3000`. */
  url: string;
  /** Use the cookie's JWT while it is fresh (default true). */
  cache?: boolean;
  /** Auth route prefix (default `/api/auth`). */
  basePath?: string;
  fetch?: typeof fetch;
}

/**
 * What {@link getRequestToken} returns: the JWT (null when signed out) and the `Set-Cookie` values
 * to forward to the browser.
 * @example
 * ```ts
 * const { token, setCookies }: RequestToken = await getRequestToken(request.headers, { url });
 * const response = new Response(html, { headers: { "content-type": "text/html" } });
 * for (const cookie of setCookies) response.headers.append("set-cookie", cookie);
 * ```
 */
export interface RequestToken {
  token: string | null;
  /** `Set-Cookie` values to forward to the browser when a fresh token was fetched. */
  setCookies: string[];
}

function cookieValue(cookieHeader: string | null, name: string): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(/;\s*/)) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq) === name) {
      // A malformed escape is an unusable cookie, not a reason to fail the render.
      try {
        return decodeURIComponent(part.slice(eq + 1));
      } catch {
        return null;
      }
    }
  }
  return null;
}

/**
 * The JWT for an incoming request's cookies; null when the user is not signed in.
 * @example
 * ```ts
 * const { token, setCookies } = await getRequestToken(request.headers, { url: "http://127.0.0.1:3000" });
 * const messages = await fetchQuery(api.messages.list, {}, { url: "http://127.0.0.1:3000", token });
 * ```
 */
export async function getRequestToken(headers: Headers, options: ServerAuthOptions): Promise<RequestToken> {
  const cookies = headers.get("cookie");
  if (options.cache !== false) {
    // On https only the `__Secure-` name is ours: a plain one may have been planted by a sibling
    // subdomain or an http response, so it never wins over the secure one.
    const cached = cookieValue(cookies, `__Secure-${JWT_COOKIE}`) ?? cookieValue(cookies, JWT_COOKIE);
    if (cached && isFresh(cached)) return { token: cached, setCookies: [] };
  }
  if (!cookies) return { token: null, setCookies: [] };
  const doFetch = options.fetch ?? fetch;
  const res = await doFetch(
    `${options.url.replace(/\/+$/, "")}${options.basePath ?? "/api/auth"}/backend/token`,
    {
      headers: { cookie: cookies },
    },
  );
  if (res.status === 401 || res.status === 403) return { token: null, setCookies: [] };
  if (!res.ok) throw new Error(`token endpoint answered ${res.status}`);
  const body = (await res.json()) as { token?: string };
  return { token: body.token ?? null, setCookies: res.headers.getSetCookie() };
}

/**
 * An error returned by the backend: `code` as in the HTTP API (e.g. `UNAUTHORIZED`).
 * @example
 * ```ts
 * try {
 *   await fetchMutation(api.messages.send, { body: "" }, { url, token });
 * } catch (error) {
 *   if (error instanceof BackendCallError && error.code === "UNAUTHORIZED") return redirect("/sign-in");
 *   throw error;
 * }
 * ```
 */
export class BackendCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "BackendCallError";
  }
}

/**
 * Options of the HTTP calls ({@link fetchQuery}, {@link fetchMutation}, {@link fetchAction},
 * {@link preloadQuery}): the backend URL and the caller's JWT.
 * @example
 * ```ts
 * const { token } = await getRequestToken(request.headers, { url: "http://127.0.0.1:3000" });
 * const options: FetchOptions = { url: "http://127.0.0.1:3000", token };
 * const messages = await fetchQuery(api.messages.list, {}, options);
 * ```
 */
export interface FetchOptions {
  url: string;
  token?: string | null;
  fetch?: typeof fetch;
}

async function call(
  kind: "query" | "mutation" | "action",
  ref: FunctionReference | string,
  args: unknown,
  options: FetchOptions,
) {
  const doFetch = options.fetch ?? fetch;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await doFetch(`${options.url.replace(/\/+$/, "")}/api/${kind}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ path: functionPath(ref), args: args ?? {} }),
  });
  const body = (await res.json().catch(() => null)) as {
    status?: string;
    value?: unknown;
    code?: string;
    message?: string;
  } | null;
  if (body?.status === "success") return body.value;
  throw new BackendCallError(body?.code ?? "INTERNAL", body?.message ?? `HTTP ${res.status}`, res.status);
}

/**
 * Runs a query over HTTP (one request per query, requirements §1.8).
 * @example
 * ```ts
 * const { token } = await getRequestToken(request.headers, { url });
 * const messages = await fetchQuery(api.messages.list, {}, { url, token });
 * ```
 */
export function fetchQuery<R extends FunctionReference<"query">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<R["_returns"]> {
  return call("query", ref, args, options) as Promise<R["_returns"]>;
}

/**
 * Runs a mutation over HTTP with the caller's JWT; throws a {@link BackendCallError} when the
 * backend refuses it.
 * @example
 * ```ts
 * const { token } = await getRequestToken(request.headers, { url });
 * await fetchMutation(api.messages.send, { body: "hello" }, { url, token });
 * ```
 */
export function fetchMutation<R extends FunctionReference<"mutation">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<R["_returns"]> {
  return call("mutation", ref, args, options) as Promise<R["_returns"]>;
}

/**
 * Runs an action over HTTP with the caller's JWT; throws a {@link BackendCallError} when the
 * backend refuses it.
 * @example
 * ```ts
 * const { token } = await getRequestToken(request.headers, { url });
 * const session = await fetchAction(api.users.sessionFromAction, {}, { url, token });
 * ```
 */
export function fetchAction<R extends FunctionReference<"action">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<R["_returns"]> {
  return call("action", ref, args, options) as Promise<R["_returns"]>;
}

/**
 * Dehydrated query data embedded in a rendered page; the client hydrates it, then subscribes.
 * @example
 * ```ts
 * // Server: preload; the page embeds it, and the client hydrates it, then subscribes.
 * const preloaded: Preloaded<typeof api.messages.list> = await preloadQuery(api.messages.list, {}, { url, token });
 * // Client (React):
 * const messages = usePreloadedQuery(preloaded);
 * ```
 */
export interface Preloaded<R extends FunctionReference<"query"> = FunctionReference<"query">> {
  readonly __preloaded: true;
  path: string;
  args: R["_args"];
  value: R["_returns"];
}

/**
 * Runs a query over HTTP and wraps its result as {@link Preloaded} data, for a server-rendered page
 * that the client hydrates and then keeps live.
 * @example
 * ```ts
 * const { token } = await getRequestToken(request.headers, { url });
 * const preloaded = await preloadQuery(api.messages.list, {}, { url, token });
 * const html = `<script type="application/json" id="preloaded">${serializePreloaded(preloaded)}</script>`;
 * ```
 */
export async function preloadQuery<R extends FunctionReference<"query">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<Preloaded<R>> {
  const value = await fetchQuery(ref, args, options);
  return { __preloaded: true, path: functionPath(ref), args, value };
}

/**
 * Serializes preloaded data for a `<script type="application/json">` tag, safe against `</script>`.
 * @example
 * ```ts
 * const preloaded = await preloadQuery(api.messages.list, {}, { url, token });
 * const html = `<script type="application/json" id="preloaded">${serializePreloaded(preloaded)}</script>`;
 * // In the browser:
 * const data = JSON.parse(document.getElementById("preloaded")!.textContent!);
 * ```
 */
export function serializePreloaded(preloaded: Preloaded | Preloaded[]): string {
  return JSON.stringify(preloaded).replace(/</g, "\\u003c");
}
