/**
 * Where the Next.js helpers find the backend: its URL from the options or, when omitted, from
 * `SERVICE_AUTH_URL` at request time (so one `next build` serves any backend address).
 */

/**
 * Options of `nextjsAuth`: where the Next server reaches the backend, the auth route prefix, and
 * whether the request's cached JWT cookie is used.
 * @example
 * ```ts
 * const options: NextjsAuthOptions = { url: "http://127.0.0.1:3000", basePath: "/api/auth" };
 * export const auth = nextjsAuth(options);
 * ```
 */
export interface NextjsAuthOptions {
  /** Base URL of the backend as the Next server reaches it, e.g. `http://127.0.0.1:3000`. Default: `SERVICE_AUTH_URL`. */
  url?: string;
  /** Auth route prefix on the backend and in the Next app (default `/api/auth`). */
  basePath?: string;
  /** Use the request's `service-auth.jwt` cookie while it is fresh (default true, requirements §1.9). */
  cache?: boolean;
  /** `fetch` for calls to the backend (default the global one). */
  fetch?: typeof fetch;
}

export const DEFAULT_BASE_PATH = "/api/auth";

/** The backend URL without a trailing slash; throws a setup error when none is configured. */
export function backendUrl(options: NextjsAuthOptions): string {
  const url = options.url ?? process.env.SERVICE_AUTH_URL;
  if (!url) throw new Error("service-auth/nextjs: no backend URL (pass `url` or set SERVICE_AUTH_URL)");
  return url.replace(/\/+$/, "");
}
