/**
 * What the server-side framework bindings share (`service-auth/nextjs`, `service-auth/sveltekit`,
 * `service-auth/tanstack-start/server`): their options, where the backend is (from the options,
 * else `SERVICE_AUTH_URL` read at request time, so one build serves any backend address), the
 * auth routes they mount on the app's origin, and the function calls they make as the request's
 * user. Each binding only says how it finds the current request and its JWT.
 */
import type { FunctionReference } from "../backend/functions/references.ts";
import { type AuthProxy, authProxy } from "./auth-proxy.ts";
import {
  type FetchOptions,
  fetchAction,
  fetchMutation,
  fetchQuery,
  getRequestToken,
  type Preloaded,
  preloadQuery,
  type RequestToken,
} from "./server-rendering.ts";

type QueryRef = FunctionReference<"query">;
type MutationRef = FunctionReference<"mutation">;
type ActionRef = FunctionReference<"action">;

/**
 * Options every server-side binding takes: where the app's server reaches the backend, the auth
 * route prefix, and whether the request's cached JWT cookie is used.
 * @example
 * ```ts
 * const options: ServerBindingOptions = { url: "http://127.0.0.1:3000", basePath: "/api/auth" };
 * ```
 */
export interface ServerBindingOptions {
  /** Base URL of the backend as the app's server reaches it. Default: `SERVICE_AUTH_URL` at request time. */
  url?: string;
  /** Auth route prefix on the backend and in the app (default `/api/auth`). */
  basePath?: string;
  /** Use the request's `service-auth.jwt` cookie while it is fresh (default true, requirements §1.9). */
  cache?: boolean;
  /** `fetch` for calls to the backend (default the global one). */
  fetch?: typeof fetch;
}

export const DEFAULT_BASE_PATH = "/api/auth";

/**
 * The backend URL without a trailing slash; a setup error naming the binding (its package
 * subpath, e.g. `service-auth/nextjs`) when none is configured.
 */
function backendUrl(options: ServerBindingOptions, binding: string): string {
  const url = options.url ?? process.env.SERVICE_AUTH_URL;
  if (!url) throw new Error(`${binding}: no backend URL (pass \`url\` or set SERVICE_AUTH_URL)`);
  return url.replace(/\/+$/, "");
}

/** The binding's auth routes: `basePath` on the app's origin, proxied to the backend. */
export function bindingAuthProxy(options: ServerBindingOptions, binding: string): AuthProxy {
  return authProxy({
    backendUrl: () => backendUrl(options, binding),
    basePath: options.basePath ?? DEFAULT_BASE_PATH,
    fetch: options.fetch,
  });
}

/**
 * The JWT of a request with these `headers` by the rule of `getRequestToken` (the cookie's while
 * fresh, else one from the token endpoint), for a binding's options.
 */
export function bindingRequestToken(
  options: ServerBindingOptions,
  binding: string,
  headers: Headers,
): Promise<RequestToken> {
  return getRequestToken(headers, {
    url: backendUrl(options, binding),
    basePath: options.basePath ?? DEFAULT_BASE_PATH,
    cache: options.cache,
    fetch: options.fetch,
  });
}

/**
 * Function calls run as the current request's user, each one HTTP request to the backend
 * (requirements §1.8).
 * @example
 * ```ts
 * async function sendMessage(calls: RequestCalls, body: string) {
 *   if (!(await calls.isAuthenticated())) throw new Error("Sign in first");
 *   await calls.fetchAuthMutation(api.messages.send, { body });
 * }
 * ```
 */
export interface RequestCalls {
  /** The request's JWT (cached cookie while fresh, else fetched); null when signed out. */
  getToken(): Promise<string | null>;
  /** Whether the request carries a session the backend accepts. */
  isAuthenticated(): Promise<boolean>;
  /** Runs a query as the request's user (anonymous when signed out). Errors: `BackendCallError`. */
  fetchAuthQuery<R extends QueryRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  fetchAuthMutation<R extends MutationRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  fetchAuthAction<R extends ActionRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  /**
   * Runs a query as the request's user and returns it dehydrated: the page hands it to a component
   * that shows it from the first render and then follows it live.
   */
  preloadAuthQuery<R extends QueryRef>(ref: R, args: R["_args"]): Promise<Preloaded<R>>;
}

/** The {@link RequestCalls} of a binding whose current request's JWT `token()` gives. */
export function requestCalls(
  options: ServerBindingOptions,
  binding: string,
  token: () => Promise<string | null>,
): RequestCalls {
  const target = async (): Promise<FetchOptions> => ({
    url: backendUrl(options, binding),
    token: await token(),
    fetch: options.fetch,
  });
  return {
    getToken: () => token(),
    isAuthenticated: async () => (await token()) !== null,
    fetchAuthQuery: async (ref, args) => fetchQuery(ref, args, await target()),
    fetchAuthMutation: async (ref, args) => fetchMutation(ref, args, await target()),
    fetchAuthAction: async (ref, args) => fetchAction(ref, args, await target()),
    preloadAuthQuery: async (ref, args) => preloadQuery(ref, args, await target()),
  };
}
