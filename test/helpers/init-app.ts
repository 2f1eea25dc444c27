/**
 * An app made by `service-auth init` in a temp folder, with what its `npm install` brings (the
 * package itself, Hono and Better Auth) linked from this repository.
 */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { SERVICE_AUTH_BIN } from "./example-server.ts";
import { ROOT, runTsx } from "./process.ts";
import { tempDir } from "./temp.ts";

/** `npm install`'s result in `dir`, linked: the package and the two the app imports beside it. */
export function linkInstall(dir: string): void {
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT, join(dir, "node_modules", "service-auth"), "dir");
  for (const name of ["hono", "better-auth"])
    symlinkSync(join(ROOT, "node_modules", name), join(dir, "node_modules", name), "dir");
}

/** Runs `service-auth init NAME` in a fresh folder and "installs" the result; returns the app's folder. */
export async function initApp(name = "my-app"): Promise<string> {
  const parent = tempDir();
  const made = await runTsx(SERVICE_AUTH_BIN, ["init", name], { cwd: parent });
  if (made.code !== 0) throw new Error(`service-auth init ${name} exited ${made.code}:\n${made.stderr}`);
  const dir = join(parent, name);
  linkInstall(dir);
  return dir;
}
