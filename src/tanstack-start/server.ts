/**
 * `service-auth/tanstack-start/server`: the server side of a TanStack Start app. The backend's
 * auth endpoints on the app's origin (a server route proxying `/api/auth/*`), and function calls
 * in server functions with the current request's JWT: the `service-auth.jwt` cookie while it is
 * fresh (no request to the backend), else one from the token endpoint, looked up once per request
 * however many calls use it, and handed to the browser as a cookie (so the next navigation's
 * server function needs no round trip to the backend).
 *
 * ```ts
 * // src/lib/auth.server.ts
 * export const auth = tanstackStartAuth(); // backend at SERVICE_AUTH_URL
 * // src/routes/api/auth/$.ts
 * export const Route = createFileRoute("/api/auth/$")({ server: { handlers: auth.handlers } });
 * // a server function the route's loader calls
 * const loadMessages = createServerFn().handler(() => auth.preloadAuthQuery(api.messages.list, {}));
 * ```
 */
import { appendResponseHeader, getRequest } from "@tanstack/react-start/server";
import type { FunctionReference } from "../backend/functions/references.ts";
import { authProxy } from "../client/auth-proxy.ts";
import {
  fetchAction,
  fetchMutation,
  fetchQuery,
  getRequestToken,
  type Preloaded,
  preloadQuery,
  type RequestToken,
} from "../client/server-rendering.ts";

export type { Preloaded } from "../client/server-rendering.ts";
export { BackendCallError } from "../client/server-rendering.ts";

type QueryRef = FunctionReference<"query">;
type MutationRef = FunctionReference<"mutation">;
type ActionRef = FunctionReference<"action">;

/**
 * Options of {@link tanstackStartAuth}: where the Start server reaches the backend, the auth route
 * prefix, and whether the request's cached JWT cookie is used.
 * @example
 * ```ts
 * const options: TanStackStartAuthOptions = { url: "http://127.0.0.1:3000", basePath: "/api/auth" };
 * export const auth = tanstackStartAuth(options);
 * ```
 */
export interface TanStackStartAuthOptions {
  /** Base URL of the backend as the Start server reaches it. Default: `SERVICE_AUTH_URL` at request time. */
  url?: string;
  /** Auth route prefix on the backend and in the app (default `/api/auth`). */
  basePath?: string;
  /** Use the request's `service-auth.jwt` cookie while it is fresh (default true). */
  cache?: boolean;
  /** `fetch` for calls to the backend (default the global one). */
  fetch?: typeof fetch;
}

/**
 * A server route's handler (`server: { handlers }`): Start passes `{ request }`.
 * @example
 * ```ts
 * const { GET, POST }: Record<"GET" | "POST", ServerRouteHandler> = auth.handlers;
 * export const Route = createFileRoute("/api/auth/$")({ server: { handlers: { GET, POST } } });
 * ```
 */
export type ServerRouteHandler = (context: { request: Request }) => Promise<Response>;

/**
 * What {@link tanstackStartAuth} returns: the auth server route's handlers, and calls that run
 * functions as the current request's user (in server functions and server routes).
 * @example
 * ```ts
 * import { createServerFn } from "@tanstack/react-start";
 * import { auth } from "./auth.server.ts";
 *
 * export const getHome = createServerFn().handler(async () => {
 *   if (!(await auth.isAuthenticated())) return null;
 *   const me = await auth.fetchAuthQuery(api.users.me, {});
 *   return { name: me.name, messages: await auth.preloadAuthQuery(api.messages.list, {}) };
 * });
 * ```
 */
export interface TanStackStartAuth {
  /** `GET` and `POST` for the `/api/auth/$` server route. */
  handlers: { GET: ServerRouteHandler; POST: ServerRouteHandler };
  /** The current request's JWT; null when signed out. In server functions and server routes. */
  getToken(): Promise<string | null>;
  isAuthenticated(): Promise<boolean>;
  /** Runs a query as the request's user (anonymous when signed out). Errors: `BackendCallError`. */
  fetchAuthQuery<R extends QueryRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  fetchAuthMutation<R extends MutationRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  fetchAuthAction<R extends ActionRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  /** A query's result for `usePreloadedQuery`: shown from the first render, then live. */
  preloadAuthQuery<R extends QueryRef>(ref: R, args: R["_args"]): Promise<Preloaded<R>>;
}

/** The backend URL without a trailing slash; a setup error when none is configured. */
function backendUrl(options: TanStackStartAuthOptions): string {
  const url = options.url ?? process.env.SERVICE_AUTH_URL;
  if (!url)
    throw new Error("service-auth/tanstack-start: no backend URL (pass `url` or set SERVICE_AUTH_URL)");
  return url.replace(/\/+$/, "");
}

/**
 * The server helpers bound to one backend: handlers for the `/api/auth/$` server route (proxied to
 * the backend) and calls run with the current request's JWT.
 * @example
 * ```ts
 * // src/lib/auth.server.ts
 * import { tanstackStartAuth } from "service-auth/tanstack-start/server";
 * export const auth = tanstackStartAuth(); // backend at SERVICE_AUTH_URL, read per request
 *
 * // src/routes/api/auth/$.ts
 * export const Route = createFileRoute("/api/auth/$")({ server: { handlers: auth.handlers } });
 * ```
 */
export function tanstackStartAuth(options: TanStackStartAuthOptions = {}): TanStackStartAuth {
  const basePath = options.basePath ?? "/api/auth";
  const proxy = authProxy({ backendUrl: () => backendUrl(options), basePath, fetch: options.fetch });
  const handler: ServerRouteHandler = ({ request }) => proxy(request);
  const tokens = new WeakMap<Request, Promise<RequestToken>>();
  const getToken = async () => {
    const request = getRequest();
    let token = tokens.get(request);
    if (!token) {
      token = getRequestToken(request.headers, {
        url: backendUrl(options),
        basePath,
        cache: options.cache,
        fetch: options.fetch,
      }).then((answer) => {
        // A token fetched for this request: the browser keeps it for the next ones.
        for (const cookie of answer.setCookies) appendResponseHeader("set-cookie", cookie);
        return answer;
      });
      tokens.set(request, token);
    }
    return (await token).token;
  };
  const target = async () => ({ url: backendUrl(options), token: await getToken(), fetch: options.fetch });
  return {
    handlers: { GET: handler, POST: handler },
    getToken,
    isAuthenticated: async () => (await getToken()) !== null,
    fetchAuthQuery: async (ref, args) => fetchQuery(ref, args, await target()),
    fetchAuthMutation: async (ref, args) => fetchMutation(ref, args, await target()),
    fetchAuthAction: async (ref, args) => fetchAction(ref, args, await target()),
    preloadAuthQuery: async (ref, args) => preloadQuery(ref, args, await target()),
  };
}
