/**
 * Reads (never verifies) the claims of a JWT: clients only need `exp` to know when to refresh.
 * The server verifies every token it receives.
 */

function base64UrlDecode(part: string): string {
  const padded = part
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(part.length / 4) * 4, "=");
  if (typeof atob === "function") {
    const binary = atob(padded);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
  }
  return Buffer.from(padded, "base64").toString("utf8");
}

/**
 * The payload of a JWT, or null when it is not one.
 * @example
 * ```ts
 * const claims = decodeClaims(token);
 * const userId = typeof claims?.sub === "string" ? claims.sub : null;
 * ```
 */
export function decodeClaims(token: string): Record<string, unknown> | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(base64UrlDecode(parts[1]));
    return typeof payload === "object" && payload !== null ? payload : null;
  } catch {
    return null;
  }
}

/**
 * requirements §3.2: a token counts as expired this long before its `exp`.
 * @example
 * ```ts
 * // Refresh a token once it is within the leeway of its expiry.
 * const exp = decodeClaims(token)?.exp as number;
 * const refreshAt = (exp - EXPIRY_LEEWAY_SECONDS) * 1000;
 * ```
 */
export const EXPIRY_LEEWAY_SECONDS = 60;

/**
 * True when the token's `exp` is more than the leeway away (`nowMs` for tests).
 * @example
 * ```ts
 * const token = isFresh(cached) ? cached : await authClient.backend.getToken();
 * ```
 */
export function isFresh(token: string, nowMs = Date.now(), leewaySeconds = EXPIRY_LEEWAY_SECONDS): boolean {
  const exp = decodeClaims(token)?.exp;
  return typeof exp === "number" && exp * 1000 - leewaySeconds * 1000 > nowMs;
}
