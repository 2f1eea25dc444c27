/**
 * The platform's own HTTP answers as plain data (status, headers, JSON text), so the Hono app and
 * the Node fast path write the very same bytes.
 */
import { clientErrorOf } from "../errors.ts";

/** A complete JSON answer; header names are lower case. */
export interface JsonResponse {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/**
 * Headers of every API answer: answers carry user data, sessions or tokens, so no cache keeps
 * them, and browsers never guess another content type.
 */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

/** Headers of every JSON answer. */
export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...API_HEADERS,
  "content-type": "application/json",
});

/** A JSON answer. */
export function jsonResponse(
  status: number,
  value: unknown,
  headers: Readonly<Record<string, string>> = JSON_HEADERS,
): JsonResponse {
  return { status, headers, body: JSON.stringify(value) };
}

/**
 * The answer to any thrown value: `{status: "error", code, message, data?}` with the code's
 * status (see `clientErrorOf`: internal errors are logged and shown only as `INTERNAL`).
 */
export function errorResponse(error: unknown): JsonResponse {
  const { status, error: shown } = clientErrorOf(error);
  return jsonResponse(status, { status: "error", ...shown });
}
