/**
 * Typed errors and the one registry of error codes. Every error a client can see carries a stable
 * `code`; {@link ERROR_CODES} gives each code its HTTP status and how it reaches a WebSocket client,
 * and nothing else maps codes to statuses. Anything that is not a `ServiceError` is an internal
 * error: it is logged with a request id and the client only sees `INTERNAL`.
 */
import { randomUUID } from "node:crypto";
import type { TokenErrorCode } from "./auth/jwks-source.ts";
import { logger } from "./logger.ts";

/**
 * How an error reaches a WebSocket client (docs/protocol.md):
 * - `reply`: as the `error` of the `result` / `update` answering a call or subscription;
 * - `auth_error`: also as an `auth_error` message, when the connection's credentials are refused;
 * - `refused`: as an `error` message, when a client message is refused before anything runs;
 * - `http-only`: never; the socket has its own rule (e.g. close 1009 for an oversized frame).
 */
export type WsDelivery = "reply" | "auth_error" | "refused" | "http-only";

/** One registered error code. */
export interface ErrorCodeSpec {
  /** HTTP status of a response carrying this code. */
  readonly status: number;
  readonly ws: WsDelivery;
  /** When a client sees this code. */
  readonly meaning: string;
}

const spec = (status: number, ws: WsDelivery, meaning: string): ErrorCodeSpec => ({ status, ws, meaning });

/** Reasons a bearer token is refused; clients see them as `UNAUTHORIZED` (401). */
const TOKEN_ERRORS = {
  TOKEN_MALFORMED: spec(401, "auth_error", "the token is not a well-formed JWS"),
  TOKEN_EXPIRED: spec(401, "auth_error", "the token's `exp` has passed"),
  TOKEN_TOO_LARGE: spec(401, "auth_error", "the token exceeds the size limit"),
  INVALID_SIGNATURE: spec(401, "auth_error", "the signature does not verify"),
  UNKNOWN_KEY: spec(401, "auth_error", "no key of the issuer's key set matches the token"),
  ALG_NOT_ALLOWED: spec(401, "auth_error", "the token's algorithm is not accepted"),
  CLAIM_INVALID: spec(401, "auth_error", "a claim (iss, aud, nbf, iat, sub) is missing or wrong"),
  NO_KEYS: spec(401, "auth_error", "the issuer's key set is missing, invalid or unreachable"),
} as const satisfies Record<TokenErrorCode, ErrorCodeSpec>;

/** Every error code the platform sends, with its HTTP status and WebSocket delivery. */
export const ERROR_CODES = {
  BAD_REQUEST: spec(400, "reply", "the request is malformed (body not JSON, wrong shape)"),
  INVALID_ARGUMENTS: spec(400, "reply", "a function's arguments fail its validator"),
  SCHEMA_VIOLATION: spec(400, "reply", "a write does not match the table's schema"),
  UNAUTHORIZED: spec(401, "auth_error", "no acceptable credentials (token refused or missing)"),
  ...TOKEN_ERRORS,
  FORBIDDEN: spec(403, "reply", "the caller may not do this"),
  ACCOUNT_BANNED: spec(403, "auth_error", "the caller's account is banned"),
  NOT_FOUND: spec(404, "reply", "no such route or document"),
  FUNCTION_NOT_FOUND: spec(404, "reply", "no public function with this path"),
  CONFLICT: spec(409, "reply", "a write would repeat a unique value or lost a race"),
  PAYLOAD_TOO_LARGE: spec(413, "http-only", "the request body exceeds the limit"),
  TOO_MANY_REQUESTS: spec(429, "reply", "a rate or concurrency limit was reached"),
  READ_ONLY: spec(500, "reply", "a write was attempted where only reads are allowed"),
  INTERNAL: spec(500, "reply", "an unexpected failure; details are only in the server log"),
  DATABASE_UNAVAILABLE: spec(503, "reply", "the database cannot be reached"),
  DATABASE_BUSY: spec(503, "reply", "the database is locked by another writer"),
  INDEX_NOT_READY: spec(
    503,
    "reply",
    "a query reads an index that is still being built (added to a table that holds documents); retry once it is ready",
  ),
  DATABASE_UNREACHABLE: spec(503, "http-only", "`GET /healthz`: the database does not answer"),
  DRAINING: spec(
    503,
    "http-only",
    "`GET /healthz`: the server is shutting down (finishing what it accepted)",
  ),
  // The sync protocol's own codes: they never travel over HTTP; the statuses say what they are.
  BAD_MESSAGE: spec(400, "refused", "a message is not JSON, not an object or lacks fields"),
  UNKNOWN_MESSAGE_TYPE: spec(400, "refused", "a message has a type the server does not know"),
  PROTOCOL_ERROR: spec(400, "refused", "a message is out of place (e.g. a second connect)"),
  DUPLICATE_ID: spec(409, "refused", "a subscription id is already in use on the connection"),
  TOO_MANY_SUBSCRIPTIONS: spec(429, "refused", "the connection has the most subscriptions allowed"),
  BUDGET_EXCEEDED: spec(
    429,
    "refused",
    "the connection or the server holds the most bytes allowed (subscriptions, requests awaiting an answer)",
  ),
  // Sent on Better Auth's routes (`/api/auth/*`) by the auth integration, in Better Auth's error
  // shape: they are thrown as Better Auth's `APIError` (from its hooks and middleware, where only
  // an `APIError` becomes Better Auth's answer), and never reach a socket. Each throw's status
  // name is checked against these by test/architecture/error-registry.test.ts.
  FIELD_TOO_LONG: spec(
    400,
    "http-only",
    "a user field (name, email, image, username) exceeds its length limit",
  ),
  INVALID_TOKEN: spec(
    401,
    "http-only",
    "a magic-link token that is not one (Better Auth's own code and message)",
  ),
  EMAIL_NOT_VERIFIED: spec(403, "http-only", "an invitation is used before the email address is verified"),
  SESSION_NOT_FRESH: spec(403, "http-only", "a sensitive account change needs a recent sign-in"),
  MAIL_UNAVAILABLE: spec(
    503,
    "http-only",
    "an auth email (verification, reset, magic link) could not be sent",
  ),
  // The Next.js route handler (`src/nextjs`, bundled into the Next app without the platform).
  BACKEND_UNREACHABLE: spec(502, "http-only", "the Next.js auth route cannot reach the backend"),
} as const satisfies Record<string, ErrorCodeSpec>;

/** A registered code, or an application's own (which answers 400 unless given a status). */
export type ErrorCode = keyof typeof ERROR_CODES | (string & {});

/** Status of a code without a registry entry or explicit status. */
const DEFAULT_STATUS = 400;

/** The HTTP status of an error code. */
export function httpStatusOf(code: ErrorCode): number {
  // Own properties only: an application code such as "constructor" must not find Object's.
  return Object.hasOwn(ERROR_CODES, code)
    ? ERROR_CODES[code as keyof typeof ERROR_CODES].status
    : DEFAULT_STATUS;
}

/** An error meant for the caller: its code and message are sent to the client as they are. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data?: unknown;
  constructor(code: ErrorCode, message: string, options?: { status?: number; data?: unknown }) {
    super(message);
    this.name = "ServiceError";
    this.code = code;
    this.status = options?.status ?? httpStatusOf(code);
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

/**
 * Whether `error` says the database could not answer right now (outage, foreign lock): nothing
 * was decided, so callers retry later instead of treating it as a refusal (e.g. a sign-out).
 */
export function isUnavailableError(error: unknown): boolean {
  return isServiceError(error) && (error.code === "DATABASE_UNAVAILABLE" || error.code === "DATABASE_BUSY");
}

export function isServiceError(e: unknown): e is ServiceError {
  return e instanceof ServiceError;
}

/** An error as every transport shows it: the HTTP body (plus `status`) and the WebSocket `error`. */
export interface ClientError {
  code: string;
  message: string;
  data?: unknown;
}

/**
 * What the client is told about any thrown value, and with which HTTP status. A `ServiceError`
 * is shown as it is (its `data` too, except for `UNAUTHORIZED`, whose data names why a token was
 * refused); anything else is logged with a fresh request id and shown as `INTERNAL` naming it.
 */
export function clientErrorOf(error: unknown): { status: number; error: ClientError } {
  if (error instanceof ServiceError) {
    const shown: ClientError = { code: error.code, message: error.message };
    if (error.data !== undefined && error.code !== "UNAUTHORIZED") shown.data = error.data;
    return { status: error.status, error: shown };
  }
  const requestId = randomUUID();
  logger.error("internal error", {
    requestId,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
  return {
    status: ERROR_CODES.INTERNAL.status,
    error: { code: "INTERNAL", message: `Internal server error (request ${requestId})` },
  };
}
