// requirements §4.1: the MessageChannel stand-in must load before every other import of the HTTP entry.
import "service-auth/auth/polyfill";
import { Hono } from "hono";
import { authHttpRouter, type HttpEnv } from "service-auth/auth";
import type { Backend, HttpRoutes } from "service-auth/server";
import { adminConsoleRoutes } from "./admin/routes.ts";
import { createAuth } from "./auth.ts";
import { webRoutes } from "./web/routes.ts";

/**
 * The HTTP routes: cross-origin rule on /api/*, Better Auth under /api/auth/*, the admin console
 * at /admin (it needs the started backend), then the web UI.
 */
export default function routes(backend: Backend): HttpRoutes {
  const app = new Hono<HttpEnv>();
  app.route("/", adminConsoleRoutes({ backend, createAuth }));
  app.route("/", webRoutes);
  return authHttpRouter({ createAuth, app });
}
