/**
 * `defineApp`: an app as one definition (schema, modules, auth, routes, crons, migrations,
 * commands) with the product's defaults built in. `service-auth start APP` starts it with every
 * setting and rule (start-app.ts); the CLI loads the same object.
 */
import type { Hono } from "hono";
import {
  type AppCommand,
  auditCommand,
  auditEnvChanges,
  auditRetentionCrons,
  authCommand,
  authConfig,
  authHousekeepingCrons,
  authHttpRouter,
  ensureAuthEnv,
  type HttpEnv,
  runAsUser,
} from "../auth/index.ts";
import {
  anyApi,
  type Backend,
  type CronJobs,
  cronJobs,
  type HttpRoutes,
  type SchemaDefinition,
  type ServiceOptions,
} from "../backend/server.ts";
import {
  type AppAuthOptions,
  AUTH_DEFAULT_NAMES,
  type AuthDefaultSwitches,
  type AuthDefinition,
  defineAuth,
  type ProductModules,
} from "./auth.ts";

type Modules = Record<string, Record<string, unknown>>;

/**
 * An app as `defineApp` takes it.
 *
 * @example
 * ```ts
 * export default defineApp({ schema, modules: { notes }, auth: { schema, appName: "Notes" } });
 * ```
 */
export interface AppInput<S extends SchemaDefinition, M extends Modules> {
  schema: S;
  /** The app's own function modules, by name (`notes` → `notes:list`). */
  modules: M;
  /**
   * The auth: what {@link defineAuth} returned (when app code needs `createAuth`), or its options.
   * The product registers the `auth`, `mail`, `audit` and `admin` modules unless `modules` has
   * one of that name.
   */
  auth: AuthDefinition<S> | AppAuthOptions<S>;
  /**
   * The app's own HTTP routes (pages, webhooks), given the started backend; they run behind the
   * auth middleware, with Better Auth under /api/auth/* and the cross-origin rule on /api/*.
   */
  routes?: Hono<HttpEnv> | ((backend: Backend) => Hono<HttpEnv>);
  /** The app's cron jobs; the product's housekeeping jobs are added to them. */
  crons?: CronJobs;
  /** Online migrations by name (`service-auth migrate NAME`). */
  migrations?: ServiceOptions["migrations"];
  /** CLI commands (`service-auth NAME …`); the product adds `auth` and `audit`. */
  commands?: Record<string, AppCommand>;
  /**
   * Any other option of `startService` (e.g. `sync`, `maxBodyBytes`, `scheduler`); the settings
   * are `service-auth start`'s to read.
   */
  service?: Omit<
    ServiceOptions,
    "schema" | "modules" | "auth" | "routes" | "crons" | "migrations" | "settings"
  >;
}

const APP_BRAND = Symbol.for("service-auth.app");

/**
 * What {@link defineApp} returns: `startService` options plus the app's commands and auth.
 *
 * @example
 * ```ts
 * export const app: AppDefinition = defineApp({ schema, modules: { notes }, auth: { schema } });
 * export const api: ApiOf<typeof app.modules> = anyApi;
 * ```
 */
export type AppDefinition<S extends SchemaDefinition = SchemaDefinition, M extends Modules = Modules> = Omit<
  ServiceOptions,
  "modules"
> & {
  schema: S;
  modules: Omit<ProductModules, keyof M> & M;
  commands: Record<string, AppCommand>;
  /** The app's auth (its `createAuth`, `getAuth`, `authData`). */
  authDefinition: AuthDefinition<S>;
  /** The defaults the app turned off, by name (the start log names them). */
  defaultsOff: readonly (keyof AuthDefaultSwitches)[];
  readonly [APP_BRAND]: true;
};

/**
 * Whether `value` was made by {@link defineApp}.
 *
 * @example
 * ```ts
 * const mod = await import("./app.ts");
 * if (isAppDefinition(mod.default)) await startApp(mod.default);
 * ```
 */
export function isAppDefinition(value: unknown): value is AppDefinition {
  return typeof value === "object" && value !== null && (value as any)[APP_BRAND] === true;
}

/**
 * Defines an app: its schema, function modules and auth options, with every product default
 * (rate limits by the real client address, field limits, the native hasher, audit trail, mail
 * outbox, housekeeping crons, admin functions, `run --as`, `env sync --auth`). Export it as the
 * module's default (or as `app`) and start it with `service-auth start`.
 *
 * @example
 * ```ts
 * // app.ts
 * import { authTables, defineApp } from "service-auth/app";
 * import { defineSchema, defineTable, functionsFor, v } from "service-auth/server";
 *
 * const schema = defineSchema({ ...authTables(), notes: defineTable({ body: v.string() }) });
 * const { query } = functionsFor(schema);
 * const list = query({ args: {}, handler: (ctx) => ctx.db.query("notes").collect() });
 *
 * export default defineApp({ schema, modules: { notes: { list } }, auth: { schema } });
 * ```
 */
export function defineApp<S extends SchemaDefinition, M extends Modules>(
  input: AppInput<S, M>,
): AppDefinition<S, M> {
  const auth: AuthDefinition<S> =
    "kind" in input.auth && input.auth.kind === "service-auth.auth"
      ? (input.auth as AuthDefinition<S>)
      : defineAuth(input.auth as AppAuthOptions<S>);
  const off = AUTH_DEFAULT_NAMES.filter((name) => auth.defaults[name] === false);
  const missing = requiredTables(auth.defaults).filter((table) => !(table in input.schema.tables));
  if (missing.length > 0)
    throw new Error(
      `the schema lacks the auth table(s) ${missing.join(", ")}: spread authTables(…) from service-auth/app into defineSchema, with the same options as the auth`,
    );

  const product: Record<string, Record<string, unknown>> = {
    auth: auth.modules.auth,
    mail: auth.modules.mail,
  };
  if (auth.defaults.auditTrail !== false) product.audit = auth.modules.audit;
  if (auth.defaults.adminFunctions !== false) product.admin = auth.modules.admin;

  let crons = input.crons ?? cronJobs();
  // Each runs once per tick across every instance and worker.
  if (auth.defaults.housekeeping !== false) crons = authHousekeepingCrons(crons, anyApi.auth.deleteExpired);
  if (auth.defaults.auditTrail !== false) crons = auditRetentionCrons(crons, anyApi.audit.sweep);

  const commands: Record<string, AppCommand> = {
    auth: authCommand(auth.tables, auth.extensions),
    ...(auth.defaults.auditTrail !== false ? { audit: auditCommand(anyApi.audit.list) } : {}),
    ...input.commands,
  };
  const appRoutes = input.routes;
  const routes = (backend: Backend): HttpRoutes =>
    authHttpRouter({
      createAuth: auth.createAuth,
      app: typeof appRoutes === "function" ? appRoutes(backend) : appRoutes,
    });

  return {
    ...input.service,
    schema: input.schema,
    modules: { ...product, ...input.modules } as AppDefinition<S, M>["modules"],
    auth: (env) => authConfig(env),
    routes,
    crons,
    migrations: input.migrations,
    runAs: runAsUser(auth.createAuth),
    onAuthSync: (backend) => ensureAuthEnv(backend, anyApi.auth.getLatestJwks),
    // `env set|remove|sync` from the CLI lands in the audit trail (names only).
    ...(auth.defaults.auditTrail !== false ? { onEnvChange: auditEnvChanges(anyApi.audit.record) } : {}),
    commands,
    authDefinition: auth,
    defaultsOff: off,
    [APP_BRAND]: true,
  };
}

/** The tables the defaults write to. */
function requiredTables(defaults: AuthDefaultSwitches): string[] {
  return ["user", "session", "jwks", "rateLimit", ...(defaults.auditTrail !== false ? ["auditEvent"] : [])];
}
