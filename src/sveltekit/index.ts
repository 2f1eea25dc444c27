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
import { authProxy, isAuthRequest } from "../client/auth-proxy.ts";
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

export interface SvelteKitAuthOptions {
  /** Base URL of the backend as the SvelteKit server reaches it. Default: `SERVICE_AUTH_URL` at request time. */
  url?: string;
  /** Auth route prefix on the backend and in the app (default `/api/auth`). */
  basePath?: string;
  /** Use the request's `service-auth.jwt` cookie while it is fresh (default true). */
  cache?: boolean;
  /** `fetch` for calls to the backend (default the global one). */
  fetch?: typeof fetch;
}

/** The part of SvelteKit's `RequestEvent` the helpers read. */
export interface RequestEventLike {
  request: Request;
}

/** SvelteKit's `Handle`, structurally (so this module needs no SvelteKit import). */
export type HandleLike = (input: {
  event: RequestEventLike;
  resolve: (event: any) => Response | Promise<Response>;
}) => Promise<Response>;

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

/** The backend URL without a trailing slash; a setup error when none is configured. */
function backendUrl(options: SvelteKitAuthOptions): string {
  const url = options.url ?? process.env.SERVICE_AUTH_URL;
  if (!url) throw new Error("service-auth/sveltekit: no backend URL (pass `url` or set SERVICE_AUTH_URL)");
  return url.replace(/\/+$/, "");
}

export function sveltekitAuth(options: SvelteKitAuthOptions = {}): SvelteKitAuth {
  const basePath = options.basePath ?? "/api/auth";
  const proxy = authProxy({ backendUrl: () => backendUrl(options), basePath, fetch: options.fetch });
  // One token lookup per request, shared by its loads and read again by `handle` for its cookies.
  const tokens = new WeakMap<Request, Promise<RequestToken>>();
  const requestToken = (event: RequestEventLike): Promise<RequestToken> => {
    let token = tokens.get(event.request);
    if (!token) {
      token = getRequestToken(event.request.headers, {
        url: backendUrl(options),
        basePath,
        cache: options.cache,
        fetch: options.fetch,
      });
      tokens.set(event.request, token);
    }
    return token;
  };
  const getToken = async (event: RequestEventLike) => (await requestToken(event)).token;
  const target = async (event: RequestEventLike) => ({
    url: backendUrl(options),
    token: await getToken(event),
    fetch: options.fetch,
  });

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
    isAuthenticated: async (event) => (await getToken(event)) !== null,
    fetchAuthQuery: async (event, ref, args) => fetchQuery(ref, args, await target(event)),
    fetchAuthMutation: async (event, ref, args) => fetchMutation(ref, args, await target(event)),
    fetchAuthAction: async (event, ref, args) => fetchAction(ref, args, await target(event)),
    preloadAuthQuery: async (event, ref, args) => preloadQuery(ref, args, await target(event)),
  };
}
