/**
 * docs/settings.md is the one table of settings: every environment variable the code reads (src
 * and the examples) has a row or, for the few that are not this project's settings, a mention, and
 * every row names a variable something still reads. A setting added without its row, or removed
 * with its row left behind, fails here.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/process.ts";

const DOC = readFileSync(join(ROOT, "docs/settings.md"), "utf8");

/** Build output and installed packages are not the project's code. */
const SKIPPED_DIRS = new Set(["node_modules", "dist", "build", ".next", ".output", ".svelte-kit", ".data"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : sourceFiles(path);
    return /\.(ts|tsx|js|mjs|svelte)$/.test(name) ? [path] : [];
  });
}

/** The ways the code reads a variable: the environment directly, an env reader, a setting helper. */
const READS = [
  /process\.env\.([A-Z][A-Z0-9_]*)\b/g,
  /\benv\??\.([A-Z][A-Z0-9_]*)\b/g,
  /\benv\[\s*"([A-Z][A-Z0-9_]*)"/g,
  /\benv\.get\(\s*"([A-Z][A-Z0-9_]*)"/g,
  /durationSetting\(\s*"([A-Z][A-Z0-9_]*)"/g,
  /_VAR\s*=\s*"([A-Z][A-Z0-9_]*)"/g,
  /settingProblem\(\s*"([A-Z][A-Z0-9_]*)"/g,
];

/** Variable name → the files reading it; comments (TSDoc examples) are not reads. */
function variablesRead(): Map<string, string[]> {
  const read = new Map<string, string[]>();
  for (const file of [...sourceFiles(join(ROOT, "src")), ...sourceFiles(join(ROOT, "examples"))]) {
    const code = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join("\n");
    for (const pattern of READS)
      for (const [, name] of code.matchAll(pattern))
        read.set(name, [...(read.get(name) ?? []), relative(ROOT, file)]);
  }
  return read;
}

/** The names in the first column of the table's rows (`A`, `B` and `C` in one cell count each). */
function tableNames(): string[] {
  const rows = DOC.split("\n").filter((line) => line.startsWith("| `"));
  return rows.flatMap((row) =>
    [...row.split("|")[1].matchAll(/`([A-Z][A-Z0-9_]*[A-Z0-9])`/g)].map((m) => m[1]),
  );
}

/** Read by another program (the OpenTelemetry SDK), not by this project's code. */
const READ_ELSEWHERE = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME"];

describe("docs/settings.md", () => {
  it("names every variable the code reads", () => {
    const read = variablesRead();
    // The scan itself must find the settings it is meant to find.
    expect(read.get("WORKERS")).toBeDefined();
    expect(read.get("SITE_URL")).toBeDefined();
    expect(read.get("DATABASE_STATEMENT_TIMEOUT_MS")).toBeDefined();
    const missing = [...read.keys()].filter((name) => !DOC.includes(`\`${name}\``));
    expect(missing.map((name) => `${name} (${read.get(name)?.join(", ")})`)).toEqual([]);
  });

  it("has a row only for variables something reads", () => {
    const read = variablesRead();
    const names = tableNames();
    expect(names.length).toBeGreaterThan(30);
    expect(names.filter((name) => !read.has(name) && !READ_ELSEWHERE.includes(name))).toEqual([]);
  });

  it("gives each row a default and an effect", () => {
    const rows = DOC.split("\n").filter((line) => line.startsWith("| `"));
    for (const row of rows) {
      const cells = row.split("|").slice(1, -1);
      expect(cells, row).toHaveLength(4);
      expect(
        cells.every((cell) => cell.trim() !== ""),
        row,
      ).toBe(true);
    }
  });
});
