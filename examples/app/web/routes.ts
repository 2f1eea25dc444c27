/**
 * Serves the web UI: the page, its script (bundled from `main.ts`, see bundle.ts) and the favicon.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Context, Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { HttpEnv } from "service-auth/app";
import { bundled } from "./bundle.ts";
import { FAVICON_SVG } from "./favicon.ts";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const appScript = bundled(here("./main.ts"));

/** The pages run only their own scripts and talk only to their own origin (HTTP and WebSocket). */
export const pageSecurityHeaders = secureHeaders({
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
});

/** Serves a bundled script, never cached (it changes with the code in development). */
export async function sendScript(c: Context, script: () => Promise<string>): Promise<Response> {
  c.header("content-type", "text/javascript; charset=utf-8");
  c.header("cache-control", "no-cache");
  return c.body(await script());
}

export const webRoutes = new Hono<HttpEnv>();

webRoutes.use("*", pageSecurityHeaders);

webRoutes.get("/", (c) => c.html(readFileSync(here("./index.html"), "utf8")));
webRoutes.get("/app.js", (c) => sendScript(c, appScript));
webRoutes.on("GET", ["/favicon.ico", "/favicon.svg"], (c) => {
  c.header("content-type", "image/svg+xml");
  c.header("cache-control", "public, max-age=86400");
  return c.body(FAVICON_SVG);
});
