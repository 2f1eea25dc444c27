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
import {
  bindingAuthProxy,
  bindingRequestToken,
  type RequestCalls,
  requestCalls,
  type ServerBindingOptions,
} from "../client/server-binding.ts";
import type { RequestToken } from "../client/server-rendering.ts";

export type { Preloaded } from "../client/server-rendering.ts";
export { BackendCallError } from "../client/server-rendering.ts";

/** The package subpath named in setup errors. */
const BINDING = "service-auth/tanstack-start";

/**
 * Options of {@link tanstackStartAuth}: where the Start server reaches the backend, the auth route
 * prefix, and whether the request's cached JWT cookie is used.
 * @example
 * ```ts
 * const options: TanStackStartAuthOptions = { url: "http://127.0.0.1:3000", basePath: "/api/auth" };
 * export const auth = tanstackStartAuth(options);
 * ```
 */
export interface TanStackStartAuthOptions extends ServerBindingOptions {}

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
export interface TanStackStartAuth extends RequestCalls {
  /** `GET` and `POST` for the `/api/auth/$` server route. */
  handlers: { GET: ServerRouteHandler; POST: ServerRouteHandler };
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
  const proxy = bindingAuthProxy(options, BINDING);
  const handler: ServerRouteHandler = ({ request }) => proxy(request);
  const tokens = new WeakMap<Request, Promise<RequestToken>>();
  const getToken = async () => {
    const request = getRequest();
    let token = tokens.get(request);
    if (!token) {
      token = bindingRequestToken(options, BINDING, request.headers).then((answer) => {
        // A token fetched for this request: the browser keeps it for the next ones.
        for (const cookie of answer.setCookies) appendResponseHeader("set-cookie", cookie);
        return answer;
      });
      tokens.set(request, token);
    }
    return (await token).token;
  };
  return { ...requestCalls(options, BINDING, getToken), handlers: { GET: handler, POST: handler } };
}
