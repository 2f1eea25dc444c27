// SPEC §4.1: the MessageChannel stand-in must load before every other import of the HTTP entry.
import "service-auth/auth/polyfill";
import { Hono } from "hono";
import { authHttpRouter, type HttpEnv } from "service-auth/auth";
import { createAuth } from "./auth.ts";
import { webRoutes } from "./web/routes.ts";

const app = new Hono<HttpEnv>();
app.route("/", webRoutes);

/** The HTTP routes: cross-origin rule on /api/*, Better Auth under /api/auth/*, then the web UI. */
export default authHttpRouter({ createAuth, app });
