/**
 * Serves the web UI: the page and its script, bundled from `main.ts` with esbuild on first
 * request (then kept in memory).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { HttpEnv } from "service-auth/auth";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const root = here("../../../");

let bundle: Promise<string> | undefined;

async function bundleApp(): Promise<string> {
  const result = await build({
    entryPoints: [here("./main.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    logLevel: "silent",
    alias: { "service-auth/client": `${root}src/client/index.ts` },
  });
  return result.outputFiles[0].text;
}

export const webRoutes = new Hono<HttpEnv>();

// The page runs only its own script and talks only to its own origin (HTTP and WebSocket).
webRoutes.use(
  "*",
  secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      connectSrc: ["'self'", "ws:", "wss:"],
      imgSrc: ["'self'", "data:"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
    },
  }),
);

webRoutes.get("/", (c) => c.html(readFileSync(here("./index.html"), "utf8")));
webRoutes.get("/app.js", async (c) => {
  bundle ??= bundleApp().catch((error) => {
    bundle = undefined;
    throw error;
  });
  c.header("content-type", "text/javascript; charset=utf-8");
  c.header("cache-control", "no-cache");
  return c.body(await bundle);
});
