/**
 * `service-auth/sveltekit`: server helpers for a SvelteKit app. `handle` mounts the backend's auth
 * endpoints on the app's origin (`/api/auth/*`, proxied), and the calls run functions in server
 * `load`s with the request's JWT: the `service-auth.jwt` cookie while it is fresh (no request to
 * the backend), else one from the token endpoint, whose `Set-Cookie` `handle` passes on so the next
 * navigation uses the cookie again (requirements §1.9). Live queries in components come from
 * `service-auth/svelte`.
 *
 * ```ts
 * // src/lib/auth.server.ts
 * export const auth = sveltekitAuth(); // backend at SERVICE_AUTH_URL
 * // src/hooks.server.ts
 * export const handle = auth.handle;
 * // src/routes/+page.server.ts
 * export const load = async (event) => ({ messages: await auth.preloadAuthQuery(event, api.messages.list, {}) });
 * ```
 */
import type { FunctionReference } from "../backend/functions/references.ts";
import { isAuthRequest } from "../client/auth-proxy.ts";
import {
  bindingAuthProxy,
  bindingRequestToken,
  DEFAULT_BASE_PATH,
  requestCalls,
  type ServerBindingOptions,
} from "../client/server-binding.ts";
import type { Preloaded, RequestToken } from "../client/server-rendering.ts";

export type { Preloaded } from "../client/server-rendering.ts";
export { BackendCallError } from "../client/server-rendering.ts";

type QueryRef = FunctionReference<"query">;
type MutationRef = FunctionReference<"mutation">;
type ActionRef = FunctionReference<"action">;

/** The package subpath named in setup errors. */
const BINDING = "service-auth/sveltekit";

/**
 * Options of {@link sveltekitAuth}: where the SvelteKit server reaches the backend, the auth route
 * prefix, and whether the request's cached JWT cookie is used.
 * @example
 * ```ts
 * const options: SvelteKitAuthOptions = { url: "http://127.0.0.1:3000", basePath: "/api/auth" };
 * export const auth = sveltekitAuth(options);
 * ```
 */
export interface SvelteKitAuthOptions extends ServerBindingOptions {}

/**
 * The part of SvelteKit's `RequestEvent` the helpers read.
 * @example
 * ```ts
 * // SvelteKit's RequestEvent (a load's or a hook's `event`) fits.
 * export const load = async (event: RequestEventLike) => ({
 *   signedIn: await auth.isAuthenticated(event),
 * });
 * ```
 */
export interface RequestEventLike {
  request: Request;
}

/**
 * SvelteKit's `Handle`, structurally (so this module needs no SvelteKit import).
 * @example
 * ```ts
 * // src/hooks.server.ts
 * import { sequence } from "@sveltejs/kit/hooks";
 * import { auth } from "$lib/auth.server";
 *
 * const authHandle: HandleLike = auth.handle;
 * export const handle = sequence(authHandle, otherHandle);
 * ```
 */
export type HandleLike = (input: {
  event: RequestEventLike;
  resolve: (event: any) => Response | Promise<Response>;
}) => Promise<Response>;

/**
 * What {@link sveltekitAuth} returns: the `handle` hook that proxies the auth routes, and calls
 * that run functions as the request's user.
 * @example
 * ```ts
 * // src/routes/+page.server.ts
 * import { auth } from "$lib/auth.server";
 *
 * export const load = async (event) => {
 *   if (!(await auth.isAuthenticated(event))) return { user: null };
 *   const me = await auth.fetchAuthQuery(event, api.users.me, {});
 *   return { user: me, messages: await auth.preloadAuthQuery(event, api.messages.list, {}) };
 * };
 * ```
 */
export interface SvelteKitAuth {
  /** `export const handle = auth.handle;` in `src/hooks.server.ts` (or inside `sequence`). */
  handle: HandleLike;
  /** The request's JWT; null when signed out. Read once per request, however many calls use it. */
  getToken(event: RequestEventLike): Promise<string | null>;
  isAuthenticated(event: RequestEventLike): Promise<boolean>;
  /** Runs a query as the request's user (anonymous when signed out). Errors: `BackendCallError`. */
  fetchAuthQuery<R extends QueryRef>(
    event: RequestEventLike,
    ref: R,
    args: R["_args"],
  ): Promise<R["_returns"]>;
  fetchAuthMutation<R extends MutationRef>(
    event: RequestEventLike,
    ref: R,
    args: R["_args"],
  ): Promise<R["_returns"]>;
  fetchAuthAction<R extends ActionRef>(
    event: RequestEventLike,
    ref: R,
    args: R["_args"],
  ): Promise<R["_returns"]>;
  /** A query's result for a component's `preloaded(…)` store: shown at once, then live. */
  preloadAuthQuery<R extends QueryRef>(
    event: RequestEventLike,
    ref: R,
    args: R["_args"],
  ): Promise<Preloaded<R>>;
}

/**
 * The server helpers bound to one backend: `handle` (mounts `/api/auth/*` on the app's origin and
 * keeps a freshly fetched JWT as a cookie) and calls run with the request's JWT.
 * @example
 * ```ts
 * // src/lib/auth.server.ts
 * import { sveltekitAuth } from "service-auth/sveltekit";
 * export const auth = sveltekitAuth(); // backend at SERVICE_AUTH_URL, read per request
 *
 * // src/hooks.server.ts
 * export const handle = auth.handle;
 * ```
 */
export function sveltekitAuth(options: SvelteKitAuthOptions = {}): SvelteKitAuth {
  const basePath = options.basePath ?? DEFAULT_BASE_PATH;
  const proxy = bindingAuthProxy(options, BINDING);
  // One token lookup per request, shared by its loads and read again by `handle` for its cookies.
  const tokens = new WeakMap<Request, Promise<RequestToken>>();
  const requestToken = (event: RequestEventLike): Promise<RequestToken> => {
    let token = tokens.get(event.request);
    if (!token) {
      token = bindingRequestToken(options, BINDING, event.request.headers);
      tokens.set(event.request, token);
    }
    return token;
  };
  const getToken = async (event: RequestEventLike) => (await requestToken(event)).token;
  const calls = (event: RequestEventLike) => requestCalls(options, BINDING, () => getToken(event));

  return {
    handle: async ({ event, resolve }) => {
      if (isAuthRequest(event.request, basePath)) return proxy(event.request);
      const response = await resolve(event);
      const fetched = tokens.get(event.request);
      const setCookies = fetched ? (await fetched.catch(() => null))?.setCookies : undefined;
      if (!setCookies?.length) return response;
      // A token fetched for this render: the browser keeps it, so its next navigation needs no fetch.
      const out = new Response(response.body, response);
      for (const cookie of setCookies) out.headers.append("set-cookie", cookie);
      return out;
    },
    getToken,
    isAuthenticated: (event) => calls(event).isAuthenticated(),
    fetchAuthQuery: (event, ref, args) => calls(event).fetchAuthQuery(ref, args),
    fetchAuthMutation: (event, ref, args) => calls(event).fetchAuthMutation(ref, args),
    fetchAuthAction: (event, ref, args) => calls(event).fetchAuthAction(ref, args),
    preloadAuthQuery: (event, ref, args) => calls(event).preloadAuthQuery(ref, args),
  };
}
