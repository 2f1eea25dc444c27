/**
 * `service-auth init [DIR] [--package SPEC]`: a new app in DIR (default: this folder), which must
 * be empty or absent. SPEC is what its package.json depends on (default `^` this version; the
 * tarball's path while the package is not on a registry).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { scaffoldFiles } from "./scaffold.ts";

/** This package's version, from its package.json (two folders above `app/cli` in src and dist). */
function ownVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
  return pkg.version as string;
}

/** Runs `init` with its arguments; resolves to the exit code. */
export function init(args: string[], io: { stdout(text: string): void; stderr(text: string): void }): number {
  const at = args.indexOf("--package");
  const spec = at >= 0 ? args[at + 1] : `^${ownVersion()}`;
  if (!spec) {
    io.stderr("init: --package needs a SPEC (a version, or the tarball's path)\n");
    return 2;
  }
  const rest = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
  const dir = resolve(rest[0] ?? ".");
  if (existsSync(dir) && readdirSync(dir).some((name) => name !== ".git")) {
    io.stderr(`init: ${dir} is not empty; give a new folder, e.g. npx service-auth init my-app\n`);
    return 1;
  }
  mkdirSync(dir, { recursive: true });
  const name =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "-") || "app";
  for (const [file, text] of Object.entries(scaffoldFiles(name, spec))) writeFileSync(join(dir, file), text);
  const cd = relative(process.cwd(), dir);
  io.stdout(
    `made ${name}: app.mjs (tables, notes:list, notes:add), page.html + page.mjs, app.test.mjs\nnext: ${cd ? `cd ${cd} && ` : ""}npm install && npm start   (then open http://localhost:3000)\n`,
  );
  return 0;
}
