/**
 * Error codes get their HTTP status in one registry, which merges the codes each module owns:
 * the platform's (`src/backend/errors.ts`, token refusals in `src/backend/auth/token-errors.ts`),
 * the auth integration's (`src/auth/error-codes.ts`) and the Next.js helpers'
 * (`src/client/error-codes.ts`, re-exported by `src/nextjs/error-codes.ts`). These tests fail when another module pairs a code with a status,
 * when two modules claim one code, when a module sends a code that neither it nor the platform
 * registers (or, through Better Auth's `APIError`, with another status than the registry's), or
 * when the sync transport borrows the HTTP one's error mapping again. The behaviour: every code has
 * one HTTP status and one WebSocket delivery, errors take their status from it, and both transports
 * show an error alike.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { APIError } from "better-auth/api";
import { describe, expect, it, vi } from "vitest";
import { AUTH_ERROR_CODES } from "../../src/auth/error-codes.ts";
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
  defineErrorCodes,
  ERROR_CODES,
  type ErrorCodeSpec,
  httpStatusOf,
  registeredErrorCodes,
  ValidationError,
} from "../../src/backend/errors.ts";
import { errorResponse } from "../../src/backend/http/json-response.ts";
import { logger } from "../../src/backend/logger.ts";
import { classifyDatabaseError } from "../../src/backend/storage/db-errors.ts";
import { wireError } from "../../src/backend/sync/wire-error.ts";
import { AUTH_PROXY_ERROR_CODES } from "../../src/client/error-codes.ts";
import { NEXTJS_ERROR_CODES } from "../../src/nextjs/error-codes.ts";

/** Where codes are declared with their statuses: the registries, one per owning module. */
const REGISTRY_FILES = [
  "src/backend/errors.ts",
  "src/backend/auth/token-errors.ts",
  "src/auth/error-codes.ts",
  "src/client/error-codes.ts",
];

/** The codes each part of the source may send: the platform's, plus its own module's. */
const OWN_CODES: [folder: string, codes: Record<string, ErrorCodeSpec>][] = [
  ["src/auth/", AUTH_ERROR_CODES],
  ["src/nextjs/", NEXTJS_ERROR_CODES],
  ["src/client/", AUTH_PROXY_ERROR_CODES],
];

/** The merged registry, as the running server and the Next.js helpers see it together. */
const ALL_CODES: Record<string, ErrorCodeSpec> = {
  ...Object.fromEntries([...registeredErrorCodes()].map(([code, { spec }]) => [code, spec])),
  ...AUTH_PROXY_ERROR_CODES,
};

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

/** A comment line (TSDoc examples show codes and statuses; they send nothing). */
const COMMENT = /^\s*(\*|\/\/|\/\*)/;

/** The file's text without its comment lines. */
function codeOf(file: string): string {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => !COMMENT.test(line))
    .join("\n");
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

describe("error registry: the sources", () => {
  it("no module but the registries maps error codes to HTTP statuses", () => {
    const offenders: string[] = [];
    for (const dir of ["src", "examples"]) {
      for (const file of files(join(root, dir))) {
        const name = relative(root, file);
        if (REGISTRY_FILES.includes(name)) continue;
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (!COMMENT.test(line) && STATUS_MAPPING.some((re) => re.test(line)))
              offenders.push(`${name}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(offenders).toEqual([]);
  });

  it("every error code a module sends is registered", () => {
    // A code literal where an error is made: `code: "X"`, `new AppError("X"`, `new ProtocolError("X"` …
    const SENT_CODE =
      /(?:\bcode\s*[:=]\s*|new (?:AppError|ProtocolError|ValidationError|TokenError)\(\s*)["']([A-Z][A-Z0-9_]+)["']/g;
    const unregistered: string[] = [];
    let seen = 0;
    for (const file of files(join(root, "src"))) {
      const name = relative(root, file);
      const own = OWN_CODES.find(([folder]) => name.startsWith(folder))?.[1] ?? {};
      for (const m of codeOf(file).matchAll(SENT_CODE)) {
        seen++;
        if (!Object.hasOwn(ERROR_CODES, m[1]) && !Object.hasOwn(own, m[1]))
          unregistered.push(`${name}: ${m[1]}`);
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
        const expected = ALL_CODES[code]?.status;
        const actual = new APIError(status as "BAD_REQUEST").statusCode;
        if (actual !== expected)
          mismatched.push(`${relative(root, file)}: ${code} sent as ${actual}, registered ${expected}`);
      }
    }
    expect(seen).toBeGreaterThanOrEqual(5);
    expect(mismatched).toEqual([]);
  });

  it("each code has one owner: the module registries do not overlap, and the merged registry holds them all", () => {
    const owners = new Map<string, string[]>();
    const tables: [string, Record<string, ErrorCodeSpec>][] = [
      [
        "platform",
        Object.fromEntries(Object.entries(ERROR_CODES).filter(([c]) => !Object.hasOwn(TOKEN_ERROR_CODES, c))),
      ],
      ["token refusals", TOKEN_ERROR_CODES],
      ["auth", AUTH_ERROR_CODES],
      ["auth proxy", AUTH_PROXY_ERROR_CODES],
    ];
    for (const [owner, codes] of tables)
      for (const code of Object.keys(codes)) owners.set(code, [...(owners.get(code) ?? []), owner]);
    expect([...owners].filter(([, o]) => o.length > 1)).toEqual([]);
    const registered = registeredErrorCodes();
    for (const code of [...Object.keys(ERROR_CODES), ...Object.keys(AUTH_ERROR_CODES)])
      expect(registered.has(code), code).toBe(true);
    expect(registered.get("SESSION_NOT_FRESH")?.owner).toBe("service-auth/auth");
    for (const spec of Object.values(TOKEN_ERROR_CODES))
      expect(spec).toMatchObject({ status: 401, ws: "auth_error" });
  });

  it("registering a code another module owns is refused; the same module's codes again change nothing", () => {
    expect(() =>
      defineErrorCodes("some-plugin", { FORBIDDEN: { status: 403, ws: "reply", meaning: "mine" } }),
    ).toThrow(/FORBIDDEN of some-plugin is registered already by service-auth\/server/);
    expect(() =>
      defineErrorCodes("some-plugin", { SESSION_NOT_FRESH: AUTH_ERROR_CODES.SESSION_NOT_FRESH }),
    ).toThrow(/registered already by service-auth\/auth/);
    expect(defineErrorCodes("service-auth/auth", AUTH_ERROR_CODES)).toBe(AUTH_ERROR_CODES);
    expect(registeredErrorCodes().get("FORBIDDEN")?.spec.meaning).toBe(ERROR_CODES.FORBIDDEN.meaning);
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

describe("error registry: the behaviour", () => {
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
      expect(new AppError(code, "m").status, code).toBe(spec.status);
    }
    expect(new ValidationError("INVALID_ARGUMENTS", "args.x", "string", "bad").status).toBe(400);
    expect(new AppError("TEAPOT", "m", { status: 418 }).status).toBe(418);
    // Application codes answer 400; names of Object.prototype members are application codes too.
    for (const code of ["MY_APP_CODE", "constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(new AppError(code, "m").status, code).toBe(400);
    }
  });

  it("shows an AppError as it is on both transports, without an UNAUTHORIZED error's data", () => {
    const conflict = new AppError("CONFLICT", "taken", { data: { field: "email" } });
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
    const refused = new AppError("UNAUTHORIZED", "Token has expired", {
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
    // The former name `ServiceError` is gone from the sources, not kept as a second class.
    expect(readFileSync(join(root, "src/backend/errors.ts"), "utf8")).not.toMatch(/\bServiceError\b/);
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
