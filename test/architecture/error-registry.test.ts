/**
 * The one error registry, `src/backend/errors.ts`, and the one test of it. The registry: every
 * code has one HTTP status and one WebSocket delivery, errors take their status from it, and both
 * transports show an error alike. The sources: these tests fail when another module pairs a code
 * with a status, when a module sends a code the registry does not list (or, through Better Auth's
 * `APIError`, with another status than the registry's), or when the sync transport borrows the
 * HTTP one's error mapping again.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { APIError } from "better-auth/api";
import { describe, expect, it, vi } from "vitest";
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
import { wireError } from "../../src/backend/sync/wire-error.ts";

const root = resolve(import.meta.dirname, "../..");

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

/** An upper-case code next to a literal 4xx/5xx status: a map entry or a status literal. */
const STATUS_MAPPING = [
  /\b[A-Z][A-Z_]{3,}\b["']?\s*:\s*[45]\d\d\b/, // { NOT_FOUND: 404 }
  /,\s*[45]\d\d\s*\)/, // c.json(body, 413)
  /\bstatus\s*[:=]\s*[45]\d\d\b/, // { status: 500 }
];

/** The arguments of a call whose opening parenthesis `text` follows: up to the one closing it. */
function argumentsOf(text: string): string {
  let depth = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === "`") {
      // Skip the string literal (the calls scanned have no nested template literals).
      while (++i < text.length && text[i] !== c) if (text[i] === "\\") i++;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return text.slice(0, i);
  }
  return text;
}

describe("error registry in the sources", () => {
  it("no module but errors.ts maps error codes to HTTP statuses", () => {
    const offenders: string[] = [];
    for (const dir of ["src", "examples"]) {
      for (const file of files(join(root, dir))) {
        const name = relative(root, file);
        if (name === "src/backend/errors.ts") continue;
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (STATUS_MAPPING.some((re) => re.test(line)))
              offenders.push(`${name}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(offenders).toEqual([]);
  });

  it("every error code a module sends is registered", () => {
    // A code literal where an error is made: `code: "X"`, `new ServiceError("X"`, `new ProtocolError("X"` …
    const SENT_CODE =
      /(?:\bcode\s*[:=]\s*|new (?:ServiceError|AppError|ProtocolError|ValidationError|TokenError)\(\s*)["']([A-Z][A-Z0-9_]+)["']/g;
    const unregistered: string[] = [];
    let seen = 0;
    for (const file of files(join(root, "src"))) {
      for (const m of readFileSync(file, "utf8").matchAll(SENT_CODE)) {
        seen++;
        if (!Object.hasOwn(ERROR_CODES, m[1])) unregistered.push(`${relative(root, file)}: ${m[1]}`);
      }
    }
    expect(seen).toBeGreaterThan(50); // the pattern still finds the codes
    expect(unregistered).toEqual([]);
  });

  it("a code sent as Better Auth's APIError carries the registry's status", () => {
    const mismatched: string[] = [];
    let seen = 0;
    for (const file of files(join(root, "src"))) {
      const text = readFileSync(file, "utf8");
      for (const call of text
        .split(/new APIError\(/)
        .slice(1)
        .map(argumentsOf)) {
        const status = /^\s*["']([A-Z_]+)["']/.exec(call)?.[1];
        const code = /\bcode:\s*["']([A-Z][A-Z0-9_]+)["']/.exec(call)?.[1];
        if (!status || !code) continue;
        seen++;
        const expected = ERROR_CODES[code as keyof typeof ERROR_CODES]?.status;
        const actual = new APIError(status as "BAD_REQUEST").statusCode;
        if (actual !== expected)
          mismatched.push(`${relative(root, file)}: ${code} sent as ${actual}, registered ${expected}`);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(5);
    expect(mismatched).toEqual([]);
  });

  it("the sync transport imports nothing of the HTTP transport but types", () => {
    const offenders: string[] = [];
    for (const file of files(join(root, "src/backend/sync"))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+["']([^"']+)["']/gm)) {
        if (/\/http\//.test(m[3]) && !m[2]) offenders.push(`${relative(root, file)} -> ${m[3]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});

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
