/**
 * The Better Auth installed: the pinned 1.4.9 (`npm test`) or the newest patched line
 * (`npm run better-auth-next`, docs/security.md). Tests that hold on one line only say so with it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// better-auth exports no ./package.json; its entry is dist/index.mjs, one level below the package.
const entry = createRequire(import.meta.url).resolve("better-auth");
const packageJson = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8"));

/** The installed better-auth's version. */
export const BETTER_AUTH_VERSION: string = packageJson.version;

/** True on the pinned 1.4 line, false on the newest patched line. */
export const ON_PINNED_LINE: boolean = BETTER_AUTH_VERSION.startsWith("1.4.");
