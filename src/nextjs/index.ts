/**
 * `service-auth/nextjs`: server helpers for a Next.js App Router app (server components, route
 * handlers, server actions). The client provider is in `service-auth/nextjs/client`.
 *
 * ```ts
 * // lib/auth-server.ts
 * export const auth = nextjsAuth({ url: process.env.SERVICE_AUTH_URL });
 * // app/api/auth/[...all]/route.ts
 * export const { GET, POST } = auth.handler;
 * // app/page.tsx (a server component)
 * const messages = await auth.preloadAuthQuery(api.messages.list, {});
 * return <Messages preloaded={messages} />; // a client component: usePreloadedQuery(preloaded)
 * ```
 */
import { type AuthCalls, authCalls } from "./auth-calls.ts";
import { type AuthRouteHandlers, authRouteHandlers } from "./auth-route.ts";
import type { NextjsAuthOptions } from "./options.ts";

export type { Preloaded } from "../client/server-rendering.ts";
export { BackendCallError } from "../client/server-rendering.ts";
export type { AuthCalls } from "./auth-calls.ts";
export type { AuthRouteHandler, AuthRouteHandlers } from "./auth-route.ts";
export type { NextjsAuthOptions } from "./options.ts";

/**
 * What {@link nextjsAuth} returns: the request-bound calls ({@link AuthCalls}) and the auth route
 * handlers.
 * @example
 * ```ts
 * // lib/auth-server.ts
 * export const auth: NextjsAuth = nextjsAuth();
 * // app/api/auth/[...all]/route.ts
 * export const { GET, POST } = auth.handler;
 * ```
 */
export interface NextjsAuth extends AuthCalls {
  /** Route handlers proxying `/api/auth/*` to the backend. */
  handler: AuthRouteHandlers;
}

/**
 * The server helpers bound to one backend. Every call reads the current request's cookies
 * (`cookies()` of next/headers), so use them in server components, route handlers and server
 * actions, not at module level.
 * @example
 * ```tsx
 * // lib/auth-server.ts
 * import { nextjsAuth } from "service-auth/nextjs";
 * export const auth = nextjsAuth(); // backend at SERVICE_AUTH_URL, read per request
 *
 * // app/page.tsx (a server component)
 * export default async function Home() {
 *   if (!(await auth.isAuthenticated())) return <SignIn />;
 *   const messages = await auth.preloadAuthQuery(api.messages.list, {});
 *   return <Chat messages={messages} />;
 * }
 * ```
 */
export function nextjsAuth(options: NextjsAuthOptions = {}): NextjsAuth {
  return { ...authCalls(options), handler: authRouteHandlers(options) };
}
