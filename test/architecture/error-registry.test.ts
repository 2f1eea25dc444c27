/**
 * Error codes get their HTTP status in one place, `src/backend/errors.ts`: these tests fail when
 * another module pairs a code with a status, when a module sends a code the registry does not
 * list (or, through Better Auth's `APIError`, with another status than the registry's), or when
 * the sync transport borrows the HTTP one's error mapping again.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { APIError } from "better-auth/api";
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/backend/errors.ts";

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

describe("error registry", () => {
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
