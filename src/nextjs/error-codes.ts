/**
 * The Next.js helpers' error codes: those of the auth proxy they mount (`src/client/error-codes.ts`,
 * shared with the SvelteKit and TanStack Start helpers), under the name this entry point has
 * always exported.
 *
 * @example
 * ```ts
 * const res = await fetch("/api/auth/get-session");
 * if (res.status === NEXTJS_ERROR_CODES.BACKEND_UNREACHABLE.status) showOfflineBanner();
 * ```
 */
export { AUTH_PROXY_ERROR_CODES as NEXTJS_ERROR_CODES } from "../client/error-codes.ts";
