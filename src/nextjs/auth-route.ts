/**
 * The route handler that mounts the backend's auth endpoints in the Next app
 * (`app/api/auth/[...all]/route.ts`), for apps whose pages and auth share the Next origin: the
 * framework-free proxy of `service-auth/client`.
 */
import { bindingAuthProxy } from "../client/server-binding.ts";
import { BINDING, type NextjsAuthOptions } from "./options.ts";

/**
 * A Next.js route handler: the incoming `Request` in, the backend's `Response` out.
 * @example
 * ```ts
 * const { GET, POST }: Record<"GET" | "POST", AuthRouteHandler> = nextjsAuth().handler;
 * ```
 */
export type AuthRouteHandler = (request: Request) => Promise<Response>;

/**
 * `GET` and `POST` for `app/api/auth/[...all]/route.ts`: `export const { GET, POST } = auth.handler;`.
 * @example
 * ```ts
 * // app/api/auth/[...all]/route.ts
 * import { auth } from "../../../../lib/auth-server.ts";
 *
 * export const { GET, POST }: AuthRouteHandlers = auth.handler;
 * ```
 */
export interface AuthRouteHandlers {
  GET: AuthRouteHandler;
  POST: AuthRouteHandler;
}

export function authRouteHandlers(options: NextjsAuthOptions): AuthRouteHandlers {
  const proxy = bindingAuthProxy(options, BINDING);
  return { GET: proxy, POST: proxy };
}
