/**
 * Server-side rendering helpers (requirements §1.9): get a JWT for the incoming request (the cached
 * `service-auth.jwt` cookie while it is fresh, else a new one from the token endpoint), run
 * functions over HTTP with it, and preload query results the browser hydrates and subscribes to.
 */
import type { FunctionReference } from "../backend/functions/references.ts";
import { functionPath } from "./function-path.ts";
import { isFresh } from "./jwt-claims.ts";

export const JWT_COOKIE = "service-auth.jwt";

export interface ServerAuthOptions {
  /** Base URL of the backend, e.g. `http://localhost:3000`. */
  url: string;
  /** Use the cookie's JWT while it is fresh (default true). */
  cache?: boolean;
  /** Auth route prefix (default `/api/auth`). */
  basePath?: string;
  fetch?: typeof fetch;
}

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

/** The JWT for an incoming request's cookies; null when the user is not signed in. */
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

/** An error returned by the backend: `code` as in the HTTP API (e.g. `UNAUTHORIZED`). */
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

/** Runs a query over HTTP (one request per query, requirements §1.8). */
export function fetchQuery<R extends FunctionReference<"query">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<R["_returns"]> {
  return call("query", ref, args, options) as Promise<R["_returns"]>;
}

export function fetchMutation<R extends FunctionReference<"mutation">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<R["_returns"]> {
  return call("mutation", ref, args, options) as Promise<R["_returns"]>;
}

export function fetchAction<R extends FunctionReference<"action">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<R["_returns"]> {
  return call("action", ref, args, options) as Promise<R["_returns"]>;
}

/** Dehydrated query data embedded in a rendered page; the client hydrates it, then subscribes. */
export interface Preloaded<R extends FunctionReference<"query"> = FunctionReference<"query">> {
  readonly __preloaded: true;
  path: string;
  args: R["_args"];
  value: R["_returns"];
}

export async function preloadQuery<R extends FunctionReference<"query">>(
  ref: R,
  args: R["_args"],
  options: FetchOptions,
): Promise<Preloaded<R>> {
  const value = await fetchQuery(ref, args, options);
  return { __preloaded: true, path: functionPath(ref), args, value };
}

/** Serializes preloaded data for a `<script type="application/json">` tag, safe against `</script>`. */
export function serializePreloaded(preloaded: Preloaded | Preloaded[]): string {
  return JSON.stringify(preloaded).replace(/</g, "\\u003c");
}
