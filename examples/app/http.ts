import { Hono } from "hono";
import type { HttpEnv } from "service-auth/app";
import type { Backend } from "service-auth/server";
import { adminConsoleRoutes } from "./admin/routes.ts";
import { createAuth } from "./auth.ts";
import { webRoutes } from "./web/routes.ts";

/**
 * The app's pages: the admin console at /admin (it needs the started backend), then the web UI.
 * The product serves them behind the auth middleware, Better Auth under /api/auth/*.
 */
export default function routes(backend: Backend): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.route("/", adminConsoleRoutes({ backend, createAuth }));
  app.route("/", webRoutes);
  return app;
}
