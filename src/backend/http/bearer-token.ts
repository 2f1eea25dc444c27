/** Reads the caller's bearer token from an `Authorization` header. */

/**
 * The bearer token of an `Authorization` header, or null.
 *
 * @example
 * ```ts
 * import { bearerToken } from "service-auth/server";
 *
 * bearerToken("Bearer eyJhbGciOi..."); // "eyJhbGciOi..."
 * bearerToken(request.headers.get("authorization")); // null without a bearer token
 * ```
 */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}
