/**
 * Typed errors. Every error a client can see carries a stable `code`; the transports map codes to
 * HTTP statuses and WebSocket error messages. Anything that is not a `ServiceError` is an internal
 * error: it is logged with a request id and the client only sees `INTERNAL`.
 */

export type ErrorCode =
  | "BAD_REQUEST"
  | "INVALID_ARGUMENTS"
  | "SCHEMA_VIOLATION"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "ACCOUNT_BANNED"
  | "NOT_FOUND"
  | "FUNCTION_NOT_FOUND"
  | "PAYLOAD_TOO_LARGE"
  | "CONFLICT"
  | "READ_ONLY"
  | "INTERNAL"
  | "DATABASE_UNAVAILABLE"
  | "DATABASE_BUSY"
  | (string & {});

const STATUS: Record<string, number> = {
  BAD_REQUEST: 400,
  INVALID_ARGUMENTS: 400,
  SCHEMA_VIOLATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  ACCOUNT_BANNED: 403,
  NOT_FOUND: 404,
  FUNCTION_NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  READ_ONLY: 500,
  INTERNAL: 500,
  // The database cannot be reached or is locked by another writer: try again shortly.
  DATABASE_UNAVAILABLE: 503,
  DATABASE_BUSY: 503,
};

/** An error meant for the caller: its code and message are sent to the client as they are. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data?: unknown;
  constructor(code: ErrorCode, message: string, options?: { status?: number; data?: unknown }) {
    super(message);
    this.name = "ServiceError";
    this.code = code;
    this.status = options?.status ?? STATUS[code] ?? 400;
    this.data = options?.data;
  }
}

/** A value that failed a validator: `path` names the offending field (e.g. `args.body`). */
export class ValidationError extends ServiceError {
  readonly path: string;
  readonly expected: string;
  constructor(
    code: "INVALID_ARGUMENTS" | "SCHEMA_VIOLATION",
    path: string,
    expected: string,
    detail: string,
  ) {
    super(code, detail, { data: { path, expected } });
    this.path = path;
    this.expected = expected;
  }
}

/** Error thrown by application code, e.g. `throw new AppError("UNAUTHORIZED", "Sign in first")`. */
export class AppError extends ServiceError {}

export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof ServiceError;
}
