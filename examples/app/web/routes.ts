/**
 * Serves the web UI: the page, its script (`main.ts`, bundled by `browserScript`) and the favicon.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { browserScript, type HttpEnv } from "service-auth/app";
import { FAVICON_SVG } from "./favicon.ts";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

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

export const webRoutes = new Hono<HttpEnv>();

webRoutes.use("*", pageSecurityHeaders);

webRoutes.get("/", (c) => c.html(readFileSync(here("./index.html"), "utf8")));
webRoutes.get("/app.js", browserScript(new URL("./main.ts", import.meta.url)));
webRoutes.on("GET", ["/favicon.ico", "/favicon.svg"], (c) => {
  c.header("content-type", "image/svg+xml");
  c.header("cache-control", "public, max-age=86400");
  return c.body(FAVICON_SVG);
});
