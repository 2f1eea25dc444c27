/**
 * Side installs: dependencies that only some tests or tools need (the examples' web frameworks in
 * compat/frameworks, Stryker in scripts/mutation) live in a folder of their own, with their own
 * package.json and lock file, so that a newcomer's `npm install` brings only what `npm start` and
 * `npm test` of the core need.
 *
 *   tsx scripts/side-install.ts compat/frameworks     # what `npm run typecheck` and the tests run
 *
 * {@link ensureSideInstall} installs such a folder (npm, from its lock file) unless its direct
 * dependencies already resolve from the repository root at their pinned versions, then links each
 * package of the folder's node_modules that the root's lacks into the root's (relative symlinks;
 * `.bin` entries too). Node, TypeScript, Vite and Next.js then find `next` or `@stryker-mutator/core`
 * from src/, test/ and examples/ as if the root had installed them, while their peers (react, vite,
 * svelte, vitest: the folder's .npmrc sets `legacy-peer-deps`) resolve to the root's single copies.
 * A root `npm install` may prune the links as extraneous; the next call puts them back.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The folder's direct dependencies and their pinned versions. */
function pinned(folder: string): [string, string][] {
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  return Object.entries<string>(manifest.dependencies ?? {});
}

/** Whether `name` resolves from the root's node_modules at `version`. */
function resolvesAt(name: string, version: string): boolean {
  try {
    return (
      JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version === version
    );
  } catch {
    return false;
  }
}

/** Package folders directly in `modules` (scoped ones as `@scope/name`), without dot entries. */
function packagesIn(modules: string): string[] {
  return readdirSync(modules)
    .filter((entry) => !entry.startsWith("."))
    .flatMap((entry) =>
      entry.startsWith("@") ? readdirSync(join(modules, entry)).map((name) => `${entry}/${name}`) : [entry],
    );
}

function linkMissing(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    lstatSync(to);
    return; // the root's own package (or a link made before) wins
  } catch {}
  symlinkSync(relative(dirname(to), from), to);
}

/** Installs `folder` (relative to the repository root) if needed and links its packages into the root. */
export function ensureSideInstall(folder: string): void {
  const dir = join(ROOT, folder);
  const deps = pinned(dir);
  if (deps.every(([name, version]) => resolvesAt(name, version))) return;
  const modules = join(dir, "node_modules");
  if (
    !deps.every(
      ([name, version]) => existsSync(join(modules, name)) && readVersion(modules, name) === version,
    )
  ) {
    process.stderr.write(`installing ${folder} (${deps.map(([name]) => name).join(", ")})\n`);
    const npm = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], {
      cwd: dir,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (npm.status !== 0) throw new Error(`npm install failed in ${folder}`);
  }
  const rootModules = join(ROOT, "node_modules");
  for (const name of packagesIn(modules)) {
    // A stale link (a pinned version changed) is replaced; a real root package is left alone.
    const target = join(rootModules, name);
    if (
      isLink(target) &&
      (!existsSync(target) || realpathSync(target) !== realpathSync(join(modules, name)))
    ) {
      rmSync(target);
    }
    linkMissing(join(modules, name), target);
  }
  const bins = join(modules, ".bin");
  if (existsSync(bins))
    for (const bin of readdirSync(bins)) linkMissing(join(bins, bin), join(rootModules, ".bin", bin));
}

function readVersion(modules: string, name: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const folders = process.argv.slice(2);
  if (folders.length === 0) {
    process.stderr.write("usage: tsx scripts/side-install.ts FOLDER...\n");
    process.exit(2);
  }
  for (const folder of folders) ensureSideInstall(folder);
}
