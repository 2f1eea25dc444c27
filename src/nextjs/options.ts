/**
 * The Next.js helpers' options: those every server-side binding takes (`src/client/server-binding.ts`:
 * the backend's URL from the options or, when omitted, from `SERVICE_AUTH_URL` at request time, so
 * one `next build` serves any backend address).
 */
import type { ServerBindingOptions } from "../client/server-binding.ts";

/** The package subpath named in the bindings' setup errors. */
export const BINDING = "service-auth/nextjs";

/**
 * Options of `nextjsAuth`: where the Next server reaches the backend, the auth route prefix, and
 * whether the request's cached JWT cookie is used.
 * @example
 * ```ts
 * const options: NextjsAuthOptions = { url: "http://127.0.0.1:3000", basePath: "/api/auth" };
 * export const auth = nextjsAuth(options);
 * ```
 */
export interface NextjsAuthOptions extends ServerBindingOptions {}
