/**
 * The Next.js helpers' own error codes. They are bundled into the Next app without the platform,
 * so they are declared here rather than registered at run time; the platform's registry and
 * this table are checked for overlaps by test/architecture/error-registry.test.ts.
 */
import type { ErrorCodeSpec } from "../backend/error-code-spec.ts";

/**
 * The codes `service-auth/nextjs` answers with.
 *
 * @example
 * ```ts
 * const res = await fetch("/api/auth/get-session");
 * if (res.status === NEXTJS_ERROR_CODES.BACKEND_UNREACHABLE.status) showOfflineBanner();
 * ```
 */
export const NEXTJS_ERROR_CODES = {
  BACKEND_UNREACHABLE: {
    status: 502,
    ws: "http-only",
    meaning: "the Next.js auth route cannot reach the backend",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
