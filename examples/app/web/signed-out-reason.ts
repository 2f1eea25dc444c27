/**
 * Words for a person about why the page signed out, from the error the server ended the live
 * queries with (the client reports it to every query before it reports "signed out").
 */
export const SIGNED_OUT = "You were signed out.";

export function signedOutReason(error: { code?: string; message?: string } | undefined): string {
  if (!error) return SIGNED_OUT;
  if (error.code === "ACCOUNT_BANNED") return `${SIGNED_OUT} Your account has been banned.`;
  if (error.message === "Session expired") return `${SIGNED_OUT} Your session expired; sign in again.`;
  if (error.code === "UNAUTHORIZED")
    return `${SIGNED_OUT} Your session was ended (signed out elsewhere or by an administrator).`;
  return SIGNED_OUT;
}

/** Errors that end a session rather than a single request. */
export const isAuthError = (error: { code?: string }) =>
  error.code === "UNAUTHORIZED" || error.code === "ACCOUNT_BANNED";
