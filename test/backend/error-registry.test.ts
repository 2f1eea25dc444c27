/**
 * The error registry (`errors.ts`): every code has one HTTP status and one WebSocket delivery,
 * errors take their status from it, and both transports show an error alike.
 */
import { describe, expect, it, vi } from "vitest";
import {
  TOKEN_ERROR_CODES,
  TokenAlgNotAllowed,
  TokenClaimInvalid,
  TokenError,
  TokenExpired,
  TokenKeysUnavailable,
  TokenKeyUnknown,
  TokenMalformed,
  TokenSignatureInvalid,
  TokenTooLarge,
} from "../../src/backend/auth/token-errors.ts";
import {
  AppError,
  clientErrorOf,
  ERROR_CODES,
  httpStatusOf,
  ServiceError,
  ValidationError,
} from "../../src/backend/errors.ts";
import { errorResponse } from "../../src/backend/http/json-response.ts";
import { logger } from "../../src/backend/logger.ts";
import { classifyDatabaseError } from "../../src/backend/storage/db-errors.ts";
import { wireError } from "../../src/backend/sync/wire-error.ts";

describe("error registry", () => {
  it("gives the statuses the API documents", () => {
    expect(
      Object.fromEntries(
        [
          "BAD_REQUEST",
          "UNAUTHORIZED",
          "TOKEN_EXPIRED",
          "ACCOUNT_BANNED",
          "FUNCTION_NOT_FOUND",
          "PAYLOAD_TOO_LARGE",
          "TOO_MANY_REQUESTS",
          "INTERNAL",
          "DATABASE_UNAVAILABLE",
          "DATABASE_BUSY",
          "DUPLICATE_ID",
        ].map((code) => [code, httpStatusOf(code)]),
      ),
    ).toEqual({
      BAD_REQUEST: 400,
      UNAUTHORIZED: 401,
      TOKEN_EXPIRED: 401,
      ACCOUNT_BANNED: 403,
      FUNCTION_NOT_FOUND: 404,
      PAYLOAD_TOO_LARGE: 413,
      TOO_MANY_REQUESTS: 429,
      INTERNAL: 500,
      DATABASE_UNAVAILABLE: 503,
      DATABASE_BUSY: 503,
      DUPLICATE_ID: 409,
    });
  });

  it("registers the sync protocol's codes as refusals and credentials failures as auth errors", () => {
    for (const code of [
      "BAD_MESSAGE",
      "UNKNOWN_MESSAGE_TYPE",
      "PROTOCOL_ERROR",
      "DUPLICATE_ID",
      "TOO_MANY_SUBSCRIPTIONS",
    ])
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES].ws, code).toBe("refused");
    for (const code of ["UNAUTHORIZED", "ACCOUNT_BANNED", "TOKEN_MALFORMED", "NO_KEYS"])
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES].ws, code).toBe("auth_error");
    expect(ERROR_CODES.TOO_MANY_REQUESTS.ws).toBe("reply");
    expect(ERROR_CODES.PAYLOAD_TOO_LARGE.ws).toBe("http-only");
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(code, code).toMatch(/^[A-Z][A-Z_]+$/);
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(spec.status, code).toBeLessThan(600);
      expect(spec.meaning.length, code).toBeGreaterThan(10);
    }
  });

  it("gives every error its code's status, unless told otherwise", () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(new ServiceError(code, "m").status, code).toBe(spec.status);
      expect(new AppError(code, "m").status, code).toBe(spec.status);
    }
    expect(new ValidationError("INVALID_ARGUMENTS", "args.x", "string", "bad").status).toBe(400);
    expect(new AppError("TEAPOT", "m", { status: 418 }).status).toBe(418);
    // Application codes answer 400; names of Object.prototype members are application codes too.
    for (const code of ["MY_APP_CODE", "constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(new AppError(code, "m").status, code).toBe(400);
    }
  });

  it("shows a ServiceError as it is on both transports, without an UNAUTHORIZED error's data", () => {
    const conflict = new ServiceError("CONFLICT", "taken", { data: { field: "email" } });
    expect(clientErrorOf(conflict)).toEqual({
      status: 409,
      error: { code: "CONFLICT", message: "taken", data: { field: "email" } },
    });
    expect(wireError(conflict)).toEqual({ code: "CONFLICT", message: "taken", data: { field: "email" } });
    expect(errorResponse(conflict)).toEqual({
      status: 409,
      headers: {
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        "content-type": "application/json",
      },
      body: '{"status":"error","code":"CONFLICT","message":"taken","data":{"field":"email"}}',
    });
    const refused = new ServiceError("UNAUTHORIZED", "Token has expired", {
      data: { reason: "TOKEN_EXPIRED" },
    });
    expect(wireError(refused)).toEqual({ code: "UNAUTHORIZED", message: "Token has expired" });
    expect(JSON.parse(errorResponse(refused).body)).toEqual({
      status: "error",
      code: "UNAUTHORIZED",
      message: "Token has expired",
    });
  });

  it("has one client-visible error class: AppError, which keeps the cause on the server only", () => {
    // The platform's former name is the same class, not a subclass or a sibling.
    expect(ServiceError).toBe(AppError);
    const validation = new ValidationError("INVALID_ARGUMENTS", "args.x", "string", "bad");
    expect(validation).toBeInstanceOf(AppError);
    const cause = new Error("connect ECONNREFUSED 10.0.0.7:5432");
    const unavailable = new AppError("DATABASE_UNAVAILABLE", "The database is unavailable", { cause });
    expect(unavailable.cause).toBe(cause);
    expect(unavailable.name).toBe("AppError");
    expect(new AppError("FORBIDDEN", "no")).not.toHaveProperty("cause");
    // Clients see code and message; the cause (an address here) never leaves the server.
    expect(clientErrorOf(unavailable)).toEqual({
      status: 503,
      error: { code: "DATABASE_UNAVAILABLE", message: "The database is unavailable" },
    });
    expect(JSON.stringify(wireError(unavailable))).not.toContain("10.0.0.7");
    // A driver's failure, made client-facing, keeps it as the cause.
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    const busy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    expect(classifyDatabaseError(refused)).toMatchObject({ code: "DATABASE_UNAVAILABLE", cause: refused });
    expect(classifyDatabaseError(busy)).toMatchObject({ code: "DATABASE_BUSY", cause: busy });
  });

  it("has one class per token refusal, each with its registered code", () => {
    const classes = [
      TokenMalformed,
      TokenExpired,
      TokenTooLarge,
      TokenSignatureInvalid,
      TokenKeyUnknown,
      TokenAlgNotAllowed,
      TokenClaimInvalid,
      TokenKeysUnavailable,
    ];
    expect(classes.map((c) => c.code).sort()).toEqual(Object.keys(TOKEN_ERROR_CODES).sort());
    for (const Refusal of classes) {
      const error = new Refusal("Token refused");
      expect(error).toBeInstanceOf(TokenError);
      expect(error.code).toBe(Refusal.code);
      expect(error.name).toBe(Refusal.name);
      expect(ERROR_CODES[error.code]).toEqual({
        ...TOKEN_ERROR_CODES[error.code],
        status: 401,
        ws: "auth_error",
      });
    }
  });

  it("shows anything else as INTERNAL with a logged request id, and no details", () => {
    const logged = vi.spyOn(logger, "error").mockImplementation(() => {});
    try {
      const crash = new TypeError("secret-internal-detail");
      const http = clientErrorOf(crash);
      expect(http.status).toBe(500);
      expect(http.error.code).toBe("INTERNAL");
      const id = /^Internal server error \(request ([0-9a-f-]{36})\)$/.exec(http.error.message)?.[1];
      expect(id).toBeDefined();
      expect(JSON.stringify(http)).not.toContain("secret-internal-detail");
      expect(logged).toHaveBeenCalledWith(
        "internal error",
        expect.objectContaining({ requestId: id, error: "TypeError: secret-internal-detail" }),
      );
      const ws = wireError("a thrown string");
      expect(Object.keys(ws).sort()).toEqual(["code", "message"]);
      expect(ws.code).toBe("INTERNAL");
      // Every failure gets its own id.
      expect(ws.message).not.toBe(http.error.message);
    } finally {
      logged.mockRestore();
    }
  });
});
