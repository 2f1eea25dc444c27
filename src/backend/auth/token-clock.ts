/**
 * The one clock rule for bearer tokens, shared by HTTP verification, WebSocket authentication and
 * the WebSocket expiry sweep. They must agree: with a leeway at verification but none in the sweep,
 * a token inside the leeway was accepted on connect and expired by the next sweep (the auth state
 * flapped). Rule: a token is valid until `exp + CLOCK_LEEWAY_SECONDS`, everywhere.
 */

/** Allowed clock skew between a token issuer and this server, in seconds. */
export const CLOCK_LEEWAY_SECONDS = 5;

/** Whether a token with this `exp` (seconds) has expired at `nowMs`: from `exp + leeway` on. */
export function tokenExpired(exp: number, nowMs: number): boolean {
  return nowMs >= (exp + CLOCK_LEEWAY_SECONDS) * 1000;
}

/** Whether a time claim (`nbf`, `iat`; seconds) lies further in the future than the leeway at `nowMs`. */
export function beyondLeeway(claimSeconds: number, nowMs: number): boolean {
  return claimSeconds * 1000 > nowMs + CLOCK_LEEWAY_SECONDS * 1000;
}
