/**
 * Function calls from server components, route handlers and server actions, authenticated with
 * the request's JWT ({@link requestToken}): one HTTP request per call (requirements §1.8), and preloading
 * for pages whose client components then hydrate and go live over the WebSocket.
 */
import { cache } from "react";
import type { FunctionReference } from "../backend/functions/references.ts";
import {
  fetchAction,
  fetchMutation,
  fetchQuery,
  type Preloaded,
  preloadQuery,
} from "../client/server-rendering.ts";
import { backendUrl, type NextjsAuthOptions } from "./options.ts";
import { requestToken } from "./request-token.ts";

type QueryRef = FunctionReference<"query">;
type MutationRef = FunctionReference<"mutation">;
type ActionRef = FunctionReference<"action">;

/**
 * Calls bound to one backend; each reads the current request's cookies.
 * @example
 * ```ts
 * // app/actions.ts
 * "use server";
 * import { auth } from "../lib/auth-server.ts";
 *
 * export async function sendMessage(body: string) {
 *   if (!(await auth.isAuthenticated())) throw new Error("Sign in first");
 *   await auth.fetchAuthMutation(api.messages.send, { body });
 * }
 * ```
 */
export interface AuthCalls {
  /** The request's JWT (cached cookie while fresh, else fetched); null when signed out. */
  getToken(): Promise<string | null>;
  /** Whether the request carries a session the backend accepts. */
  isAuthenticated(): Promise<boolean>;
  /** Runs a query as the request's user (anonymous when signed out). Errors: `BackendCallError`. */
  fetchAuthQuery<R extends QueryRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  fetchAuthMutation<R extends MutationRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  fetchAuthAction<R extends ActionRef>(ref: R, args: R["_args"]): Promise<R["_returns"]>;
  /**
   * Runs a query as the request's user and returns it dehydrated: pass it to a client component,
   * whose `usePreloadedQuery` shows it from the first render and then follows it live.
   */
  preloadAuthQuery<R extends QueryRef>(ref: R, args: R["_args"]): Promise<Preloaded<R>>;
}

export function authCalls(options: NextjsAuthOptions): AuthCalls {
  // Once per server render (React's request cache), however many calls the page makes; outside
  // a render (route handlers, server actions) every call reads the cookies anew.
  const token = cache(() => requestToken(options));
  const target = async () => ({ url: backendUrl(options), token: await token(), fetch: options.fetch });
  return {
    getToken: () => token(),
    isAuthenticated: async () => (await token()) !== null,
    fetchAuthQuery: async (ref, args) => fetchQuery(ref, args, await target()),
    fetchAuthMutation: async (ref, args) => fetchMutation(ref, args, await target()),
    fetchAuthAction: async (ref, args) => fetchAction(ref, args, await target()),
    preloadAuthQuery: async (ref, args) => preloadQuery(ref, args, await target()),
  };
}
