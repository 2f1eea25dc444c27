/**
 * Typed errors and the one registry of error codes. Every error a client can see carries a stable
 * `code`; the registry gives each code its HTTP status and how it reaches a WebSocket client, and
 * nothing else maps codes to statuses. Each module owns its codes, as Better Auth's plugins do:
 * the platform's are below, token refusals are in `auth/token-errors.ts`, the auth integration's
 * in `src/auth/error-codes.ts` (registered with {@link defineErrorCodes}), the Next.js helpers'
 * in `src/client/error-codes.ts` (the auth proxy the frontends mount); registering a code twice throws. Anything that is not an
 * {@link AppError} is an internal error: it is logged with a request id and the client only sees
 * `INTERNAL`.
 */
import { randomUUID } from "node:crypto";
import { TOKEN_ERROR_CODES } from "./auth/token-errors.ts";
import type { ErrorCodeSpec, WsDelivery } from "./error-code-spec.ts";
import { logger } from "./logger.ts";

export type { ErrorCodeSpec, WsDelivery } from "./error-code-spec.ts";

const spec = (status: number, ws: WsDelivery, meaning: string): ErrorCodeSpec => ({ status, ws, meaning });

/** The platform's own codes, with their HTTP status and WebSocket delivery. */
export const ERROR_CODES = {
  BAD_REQUEST: spec(400, "reply", "the request is malformed (body not JSON, wrong shape)"),
  INVALID_ARGUMENTS: spec(400, "reply", "a function's arguments fail its validator"),
  SCHEMA_VIOLATION: spec(400, "reply", "a write does not match the table's schema"),
  UNAUTHORIZED: spec(401, "auth_error", "no acceptable credentials (token refused or missing)"),
  ...TOKEN_ERROR_CODES,
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
} as const satisfies Record<string, ErrorCodeSpec>;

/**
 * A registered code, or an application's own (which answers 400 unless given a status).
 *
 * @example
 * ```ts
 * import { AppError, type ErrorCode } from "service-auth/server";
 *
 * function refuse(code: ErrorCode, message: string): never {
 *   throw new AppError(code, message);
 * }
 * refuse("UNAUTHORIZED", "Sign in first"); // a registered code (401)
 * refuse("QUOTA_EXCEEDED", "Too many messages today"); // an application's own (400)
 * ```
 */
export type ErrorCode = keyof typeof ERROR_CODES | (string & {});

/** Every registered code: the platform's, and those modules added with {@link defineErrorCodes}. */
const registry = new Map<string, { owner: string; spec: ErrorCodeSpec }>(
  Object.entries(ERROR_CODES).map(([code, spec]) => [code, { owner: "service-auth/server", spec }]),
);

/**
 * Registers a module's own error codes with their HTTP status and WebSocket delivery, so every
 * transport answers them alike; returns them as given. A code that another module registered
 * already is refused: one code, one meaning. Registering the same codes again (the same module
 * loaded twice) changes nothing.
 *
 * @example
 * ```ts
 * export const BILLING_ERROR_CODES = defineErrorCodes("billing", {
 *   CARD_DECLINED: { status: 402, ws: "reply", meaning: "the card was declined" },
 * });
 * throw new AppError("CARD_DECLINED", "Your card was declined"); // answers 402
 * ```
 */
export function defineErrorCodes<const C extends Record<string, ErrorCodeSpec>>(owner: string, codes: C): C {
  for (const [code, spec] of Object.entries(codes)) {
    const known = registry.get(code);
    if (!known) continue;
    const same =
      known.owner === owner &&
      known.spec.status === spec.status &&
      known.spec.ws === spec.ws &&
      known.spec.meaning === spec.meaning;
    if (!same) throw new Error(`Error code ${code} of ${owner} is registered already by ${known.owner}`);
  }
  for (const [code, spec] of Object.entries(codes)) registry.set(code, { owner, spec });
  return codes;
}

/** The registered codes by code: the platform's and every registered module's. */
export function registeredErrorCodes(): ReadonlyMap<string, { owner: string; spec: ErrorCodeSpec }> {
  return registry;
}

/** Status of a code without a registry entry or explicit status. */
const DEFAULT_STATUS = 400;

/** The HTTP status of an error code. */
export function httpStatusOf(code: ErrorCode): number {
  // A Map, not an object: an application code such as "constructor" must not find Object's.
  return registry.get(code)?.spec.status ?? DEFAULT_STATUS;
}

/**
 * An error meant for the caller: its code, message and `data` are sent to the client as they
 * are; the HTTP status is the code's (registered, else 400) unless `status` is given. `cause`
 * stays on the server (logs, debuggers); clients never see it.
 *
 * @example
 * ```ts
 * import { AppError } from "service-auth/server";
 *
 * if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
 * throw new AppError("USERNAME_TAKEN", "Pick another name", { status: 409, data: { username } });
 * ```
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data?: unknown;
  constructor(
    code: ErrorCode,
    message: string,
    options?: { status?: number; data?: unknown; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = options?.status ?? httpStatusOf(code);
    this.data = options?.data;
  }
}

/**
 * A value that failed a validator: `path` names the offending field (e.g. `args.body`).
 *
 * @example
 * ```ts
 * try {
 *   await ctx.runMutation(api.messages.send, { body: 42 });
 * } catch (error) {
 *   if (error instanceof ValidationError) console.log(error.path, error.expected); // "args.body", "string"
 * }
 * ```
 */
export class ValidationError extends AppError {
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

/**
 * Whether `error` says the database could not answer right now (outage, foreign lock): nothing
 * was decided, so callers retry later instead of treating it as a refusal (e.g. a sign-out).
 * The one test of it: live queries, WebSocket identity checks and the auth routes ask here.
 *
 * @example
 * ```ts
 * import { isUnavailableError } from "service-auth/server";
 *
 * try {
 *   await ctx.runMutation(api.orders.place, order);
 * } catch (error) {
 *   if (isUnavailableError(error)) return new Response("try again shortly", { status: 503 });
 *   throw error;
 * }
 * ```
 */
export function isUnavailableError(error: unknown): error is AppError {
  return isAppError(error) && (error.code === "DATABASE_UNAVAILABLE" || error.code === "DATABASE_BUSY");
}

/**
 * Whether `e` is an {@link AppError} (an error whose code and message the client sees).
 *
 * @example
 * ```ts
 * if (isAppError(error) && error.code === "UNAUTHORIZED") return redirect("/sign-in");
 * ```
 */
export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/** An error as every transport shows it: the HTTP body (plus `status`) and the WebSocket `error`. */
export interface ClientError {
  code: string;
  message: string;
  data?: unknown;
}

/**
 * What the client is told about any thrown value, and with which HTTP status. An `AppError`
 * is shown as it is (its `data` too, except for `UNAUTHORIZED`, whose data names why a token was
 * refused); anything else is logged with a fresh request id and shown as `INTERNAL` naming it.
 *
 * @example
 * ```ts
 * app.onError((error, c) => {
 *   const { status, error: shown } = clientErrorOf(error);
 *   return c.json({ status: "error", ...shown }, status as ContentfulStatusCode);
 * });
 * ```
 */
export function clientErrorOf(error: unknown): { status: number; error: ClientError } {
  if (error instanceof AppError) {
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
