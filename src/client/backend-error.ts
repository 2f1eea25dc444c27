/** The error type the client reports: the backend's `{code, message, data?}`, or the connection's. */
import type { WireError } from "../protocol/messages.ts";

/**
 * An error reported by the backend (or the connection), with a stable `code`.
 * @example
 * ```ts
 * try {
 *   await backend.mutation(api.messages.send, { body: "hello" });
 * } catch (error) {
 *   if (error instanceof BackendError && error.code === "UNAUTHORIZED") showSignIn();
 *   else throw error;
 * }
 * ```
 */
export class BackendError extends Error {
  readonly code: string;
  readonly data?: unknown;
  constructor(code: string, message: string, data?: unknown) {
    super(message);
    this.name = "BackendError";
    this.code = code;
    this.data = data;
  }
}

/** The error a message from the server carries. */
export function fromWire(error: WireError): BackendError {
  return new BackendError(error.code, error.message, error.data);
}

/** Codes that mean "your credentials are not accepted" (as opposed to a failing function). */
const CREDENTIAL_CODES = new Set(["UNAUTHORIZED", "ACCOUNT_BANNED"]);

/** Whether the server refused the caller's credentials rather than the call itself. */
export function isCredentialError(error: BackendError): boolean {
  return CREDENTIAL_CODES.has(error.code);
}
