/**
 * Runs a command against the newest patched Better Auth line instead of the pinned 1.4.9
 * (docs/security.md, "The newest patched Better Auth").
 *
 *   npm run better-auth-next                                   # the whole suite (npm test)
 *   npm run better-auth-next -- npm run typecheck
 *   npm run better-auth-next -- npx vitest run test/auth/advisories
 *
 * `compat/better-auth-next` is a second install holding only that line (its own package.json and
 * lock file). This script installs it, copies this checkout's files (git's view: tracked and
 * untracked-but-not-ignored) to a directory under the system's temporary one, and gives the copy a node_modules whose
 * `better-auth` and `@better-auth/*` are the second install's and every other entry the main
 * install's (symlinks). Everything started in the copy (vitest, tsc, the tsx and node servers the
 * tests spawn) then resolves the same Better Auth, the way an application that installs it with npm
 * `overrides` does, while the main checkout's node_modules stays on 1.4.9.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const secondInstall = join(root, "compat", "better-auth-next");
// Outside the checkout: a module missing from the copy's node_modules must not be found in the
// checkout's (1.4.9) by walking up the directories. One copy per checkout.
const workspace = join(
  tmpdir(),
  `service-auth-better-auth-next-${createHash("sha256").update(root).digest("hex").slice(0, 12)}`,
);

/** The packages taken from the second install; everything else comes from the main one. */
const BETTER_AUTH_ENTRIES = new Set(["better-auth", "@better-auth"]);

function run(command: string, args: string[], cwd: string): number {
  const result = spawnSync(command, args, { cwd, stdio: "inherit" });
  return result.status ?? 1;
}

function installSecondLine(): void {
  // `npm install`, not `npm ci`, as in .ci/run; it is a no-op when the install matches the lock.
  if (run("npm", ["install", "--no-audit", "--no-fund"], secondInstall) !== 0) {
    throw new Error(`npm install failed in ${secondInstall}`);
  }
}

function copyCheckout(): void {
  rmSync(workspace, { recursive: true, force: true });
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
    .split("\0")
    .filter((file) => file !== "" && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(workspace, file)), { recursive: true });
    cpSync(join(root, file), join(workspace, file));
  }
}

function linkNodeModules(): void {
  const target = join(workspace, "node_modules");
  mkdirSync(target, { recursive: true });
  const main = join(root, "node_modules");
  // Dot entries are tools' caches (.vite, .vitest) except .bin; the copy grows its own caches.
  for (const entry of readdirSync(main)) {
    if ((entry.startsWith(".") && entry !== ".bin") || BETTER_AUTH_ENTRIES.has(entry)) continue;
    symlinkSync(join(main, entry), join(target, entry));
  }
  for (const entry of BETTER_AUTH_ENTRIES) {
    symlinkSync(join(secondInstall, "node_modules", entry), join(target, entry));
  }
}

const [command, ...args] = process.argv.length > 2 ? process.argv.slice(2) : ["npm", "test"];
installSecondLine();
copyCheckout();
linkNodeModules();
console.log(`better-auth-next: running \`${[command, ...args].join(" ")}\` in ${workspace}`);
process.exitCode = run(command, args, workspace);
