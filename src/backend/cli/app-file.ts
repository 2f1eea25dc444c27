/**
 * Finds an app module for `service-auth start|dev [APP]` and the CLI (`SERVICE_APP`): APP is a module or a folder holding `app.ts`,
 * `app.mjs` or `app.js`; without APP, the current folder.
 */
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** The module names looked for in a folder, in order. */
export const APP_FILES = ["app.ts", "app.mts", "app.mjs", "app.js"] as const;

/** The app module `arg` names (a file, or a folder with an app module), or undefined. */
export function appFile(arg: string | undefined, cwd = process.cwd()): string | undefined {
  const target = resolve(cwd, arg ?? ".");
  if (!existsSync(target)) return undefined;
  if (!statSync(target).isDirectory()) return target;
  for (const name of APP_FILES) if (existsSync(join(target, name))) return join(target, name);
  return undefined;
}

/**
 * The app a module exports: its default export, else `app`. Undefined for an entry module that
 * exports neither (it started its service itself when it was imported).
 */
export function exportedApp(mod: Record<string, unknown>): unknown {
  return mod.default ?? mod.app;
}
