/**
 * The auth proxy's own error codes (`auth-proxy.ts`, which the Next.js, SvelteKit and TanStack
 * Start helpers mount). They are bundled into the frontend's server without the platform, so they
 * are declared here rather than registered at run time; the platform's registry and this table are
 * checked for overlaps by test/architecture/error-registry.test.ts.
 */
import type { ErrorCodeSpec } from "../backend/error-code-spec.ts";

/**
 * The codes the auth proxy answers with.
 *
 * @example
 * ```ts
 * const res = await fetch("/api/auth/get-session");
 * if (res.status === AUTH_PROXY_ERROR_CODES.BACKEND_UNREACHABLE.status) showOfflineBanner();
 * ```
 */
export const AUTH_PROXY_ERROR_CODES = {
  BACKEND_UNREACHABLE: {
    status: 502,
    ws: "http-only",
    meaning: "the frontend's auth route cannot reach the backend",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
