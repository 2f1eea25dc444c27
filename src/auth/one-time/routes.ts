/**
 * The auth routes that consume a one-time credential or count attempts against one (issue 45,
 * docs/security.md "One-time credentials under concurrency"). Better Auth 1.4.9 reads such a
 * credential, checks it and deletes or re-writes it in separate adapter calls, so parallel requests
 * with the same credential all see it unused. The auth middleware runs each of these requests as one
 * write transaction (`ActionCtx.runInTransaction`), which every adapter call of the request joins:
 * on SQLite the transactions run one after another, on PostgreSQL they are SERIALIZABLE and a
 * conflicting one runs again from the start on what the winner committed, on every instance. So
 * parallel requests give exactly the outcome of some sequential order.
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** Set while a request of {@link ONE_TIME_ROUTES} runs in its transaction (see {@link inOneTimeTransaction}). */
const oneTimeTransaction = new AsyncLocalStorage<true>();

/** Runs `fn` marked as the transaction of a one-time route's request. */
export function asOneTimeTransaction<T>(fn: () => Promise<T>): Promise<T> {
  return oneTimeTransaction.run(true, fn);
}

/**
 * True inside the transaction of a one-time route's request. What would wait there for another
 * request of this process must not: that one may be waiting for this transaction's write lock.
 */
export function inOneTimeTransaction(): boolean {
  return oneTimeTransaction.getStore() === true;
}

/**
 * Paths (below the auth base path) of the routes that consume a credential or count attempts:
 * email OTP (sign-in, email verification, password reset, the check), magic link, password reset
 * token, email verification token, two-factor (TOTP, OTP, backup codes), organization invitations,
 * device authorization, one-time tokens and phone OTP.
 */
export const ONE_TIME_ROUTES: readonly string[] = [
  "/sign-in/email-otp",
  "/email-otp/verify-email",
  "/email-otp/reset-password",
  "/email-otp/check-verification-otp",
  "/magic-link/verify",
  "/reset-password",
  "/verify-email",
  "/two-factor/verify-totp",
  "/two-factor/verify-otp",
  "/two-factor/verify-backup-code",
  "/organization/accept-invitation",
  "/organization/reject-invitation",
  "/organization/cancel-invitation",
  "/device/token",
  "/device/approve",
  "/device/deny",
  "/one-time-token/verify",
  "/phone-number/verify",
  "/phone-number/reset-password",
  "/sign-in/phone-number",
];

/** The header an API key is sent in (the api-key plugin's default): its usage count is a counter too. */
export const API_KEY_HEADER = "x-api-key";

/**
 * True when the request to `route` (the path below the auth base path) must run as one transaction:
 * one of {@link ONE_TIME_ROUTES} (or `extra`), or any request carrying an API key, whose
 * remaining-uses count and rate-limit window the api-key plugin reads and writes back.
 */
export function consumesCredential(route: string, headers: Headers, extra: readonly string[] = []): boolean {
  const path = route.length > 1 && route.endsWith("/") ? route.slice(0, -1) : route;
  return ONE_TIME_ROUTES.includes(path) || extra.includes(path) || headers.has(API_KEY_HEADER);
}

/**
 * A request that can be handed to the auth handler more than once (a transaction that conflicted
 * runs again, and a request body can be read only once): the body is read here, once.
 */
export async function replayable(request: Request): Promise<() => Request> {
  if (request.body === null) return () => request.clone();
  const body = await request.arrayBuffer();
  const init = { method: request.method, headers: request.headers, signal: request.signal };
  return () => new Request(request.url, { ...init, body });
}
