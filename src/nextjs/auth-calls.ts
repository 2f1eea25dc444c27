/**
 * Function calls from server components, route handlers and server actions, authenticated with
 * the request's JWT ({@link requestToken}): one HTTP request per call (requirements §1.8), and preloading
 * for pages whose client components then hydrate and go live over the WebSocket.
 */
import { cache } from "react";
import { type RequestCalls, requestCalls } from "../client/server-binding.ts";
import { BINDING, type NextjsAuthOptions } from "./options.ts";
import { requestToken } from "./request-token.ts";

/**
 * Calls bound to one backend; each reads the current request's cookies. `preloadAuthQuery`'s
 * result goes to a client component, whose `usePreloadedQuery` shows it from the first render and
 * then follows it live.
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
export interface AuthCalls extends RequestCalls {}

export function authCalls(options: NextjsAuthOptions): AuthCalls {
  // Once per server render (React's request cache), however many calls the page makes; outside
  // a render (route handlers, server actions) every call reads the cookies anew.
  const token = cache(() => requestToken(options));
  return requestCalls(options, BINDING, token);
}
