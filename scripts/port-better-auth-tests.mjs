#!/usr/bin/env node
/**
 * Copies Better Auth's own test files at tag v1.4.9 into test/better-auth/, keeping their paths
 * below packages/better-auth/src/ and changing nothing but import specifiers (listed in
 * test/better-auth/README.md):
 * - `…/test-utils/test-instance` stays: it resolves to our replacement beside the tests;
 * - every other relative import of Better Auth's source becomes `better-auth-dist/<same path>`,
 *   the built form of that source module in node_modules/better-auth/dist (a vitest alias).
 *
 * Usage: node scripts/port-better-auth-tests.mjs <bare git dir of better-auth/better-auth> <file…>
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const TAG = "v1.4.9";
const SRC = "packages/better-auth/src/";
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "node_modules/better-auth/dist");
const [repo, ...files] = process.argv.slice(2);

/** `better-auth-dist/<module file>` for a Better Auth source module, by its path below src/. */
function distSpecifier(modulePath) {
  for (const candidate of [`${modulePath}.mjs`, `${modulePath}/index.mjs`]) {
    if (existsSync(join(dist, candidate))) return `better-auth-dist/${candidate}`;
  }
  // Type-only modules have no built file; their imports are erased before running.
  return `better-auth-dist/${modulePath}`;
}

for (const file of files) {
  if (!file.startsWith(SRC)) throw new Error(`${file} is not under ${SRC}`);
  const text = execFileSync("git", ["-C", repo, "show", `${TAG}:${file}`], { encoding: "utf8" });
  const dir = posix.dirname(file.slice(SRC.length));
  const changes = [];
  const out = text.replace(
    /(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\bvi\.mock\(\s*)(["'])(\.{1,2}(?:\/[^"']*)?)\2/g,
    (match, lead, quote, specifier) => {
      const target = posix.normalize(posix.join(dir, specifier));
      if (target === "test-utils/test-instance") return match;
      const replaced = distSpecifier(target);
      changes.push(`${specifier} → ${replaced}`);
      return `${lead}${quote}${replaced}${quote}`;
    },
  );
  const dest = join(root, "test/better-auth", file.slice(SRC.length));
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest, out);
  console.log(`${file.slice(SRC.length)}: ${[...new Set(changes)].join("; ") || "no change"}`);
}
