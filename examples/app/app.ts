/**
 * The example application: its schema, function modules, auth, pages and migrations.
 * `npm start` (`service-auth start examples/app`) serves it with every setting and default; the
 * CLI loads the same definition.
 */
import { defineApp } from "service-auth/app";
import { type ApiOf, anyApi, type InternalApiOf } from "service-auth/server";
import * as admin from "./admin.ts";
import { auth } from "./auth.ts";
import http from "./http.ts";
import * as messages from "./messages.ts";
import * as migrations from "./migrations.ts";
import * as profiles from "./profiles.ts";
import schema from "./schema.ts";
import * as users from "./users.ts";

export const app = defineApp({
  schema,
  modules: { admin, messages, profiles, users },
  auth,
  routes: http,
  migrations,
});
export default app;

/** Every function module: the app's and the product's (`auth`, `mail`, `audit`, `admin`). */
export const modules = app.modules;
/** Typed references to the public functions, e.g. `api.messages.send`. */
export const api: ApiOf<typeof modules> = anyApi;
/** Typed references to the internal functions, e.g. `internal.users.setRole`. */
export const internal: InternalApiOf<typeof modules> = anyApi;
