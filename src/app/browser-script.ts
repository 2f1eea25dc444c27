/**
 * A page's script for the browser: a module of the app (importing `service-auth/client`,
 * `better-auth/client`…) bundled with esbuild on its first request, then kept in memory.
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Context } from "hono";

/**
 * Node's `--conditions` of this process (`--conditions=X` or `--conditions X`, as vitest passes
 * them): in this repository they select the package's sources. `node` is left out: the bundle is
 * for a browser.
 */
function conditions(): string[] {
  const args = process.execArgv;
  return args.flatMap((flag, i) => {
    const joined = /^(?:--conditions|-C)=(.+)$/.exec(flag)?.[1];
    const condition = joined ?? (flag === "--conditions" || flag === "-C" ? args[i + 1] : undefined);
    return condition && condition !== "node" ? [condition] : [];
  });
}

async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    logLevel: "silent",
    conditions: conditions(),
  });
  return result.outputFiles[0].text;
}

/**
 * A route handler answering the browser bundle of `entry` (a path or `file:` URL), built once
 * (a failed build is tried again on the next request). Browsers revalidate it (`no-cache`): it
 * changes with the code, and a restarted server builds it anew.
 *
 * @example
 * ```ts
 * const routes = new Hono()
 *   .get("/", (c) => c.html(page))
 *   .get("/page.js", browserScript(new URL("./page.mjs", import.meta.url)));
 * ```
 */
export function browserScript(entry: string | URL): (c: Context) => Promise<Response> {
  const file = entry instanceof URL ? fileURLToPath(entry) : entry;
  let pending: Promise<string> | undefined;
  return async (c) => {
    const text = await (pending ??= bundle(file).catch((error) => {
      pending = undefined;
      throw error;
    }));
    return c.body(text, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "no-cache",
    });
  };
}
