/**
 * Error codes get their HTTP status in one place, `src/backend/errors.ts`: these tests fail when
 * another module pairs a code with a status, or when the sync transport borrows the HTTP one's
 * error mapping again.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

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
