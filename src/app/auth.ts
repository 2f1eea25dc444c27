/**
 * The product's auth: an app's Better Auth options passed through every default the README
 * promises (docs/decisions.md 47). The app writes only its own part (providers, plugins, session
 * lifetimes, triggers); this module adds the site URL, secret and signing keys, the database
 * adapters, mail through the outbox, the audit trail, shared rate limits by the real client
 * address, field limits, the native hasher with pre-hashing and the password-length errors
 * (`withAuthDefaults`), and makes the `auth`, `mail`, `audit` and `admin` function modules.
 */
import { type BetterAuthOptions, betterAuth } from "better-auth";
import {
  type AuthEmails,
  type AuthExtensions,
  type AuthFunctions,
  type AuthSchemaOptions,
  type AuthTriggers,
  auditTrail,
  authConfig,
  authEmails,
  backend,
  bindAuthData,
  createAdminFunctions,
  createAuditFunctions,
  defineAuthTables,
  expiredRowsCleanup,
  type MailOutboxRefs,
  mailOutbox,
  mailOutboxFunctions,
  siteUrlOf,
  trustedOriginsOf,
  withAuthDefaults,
} from "../auth/index.ts";
import {
  type ActionCtx,
  anyApi,
  type EnvReader,
  type MutationCtx,
  type QueryCtx,
  type SchemaDefinition,
} from "../backend/server.ts";

/**
 * The product defaults an app may turn off, each by name (`false`); every one is on unless the
 * definition says otherwise, and the start log names those turned off.
 *
 * @example
 * ```ts
 * // A test instance without rate limits; the start log says "defaults turned off by the app: rateLimit".
 * const defaults: AuthDefaultSwitches = { rateLimit: false };
 * export default defineApp({ schema, modules, auth: { schema, defaults } });
 * ```
 */
export interface AuthDefaultSwitches {
  /** Rate limits on sign-in, reset, OTP and token endpoints, counted in the database by real client address. */
  rateLimit?: boolean;
  /** The `auditEvent` trail (plugin, `audit` functions, retention cron, CLI `audit`, env changes). */
  auditTrail?: boolean;
  /** The cron that deletes expired sessions and verification rows. */
  housekeeping?: boolean;
  /** The admin console's functions (`admin:*`). */
  adminFunctions?: boolean;
}

/** The names of {@link AuthDefaultSwitches}, in the order the start log lists them. */
export const AUTH_DEFAULT_NAMES = ["rateLimit", "auditTrail", "housekeeping", "adminFunctions"] as const;

/**
 * What the app's options function gets: the request's settings and the emails through the outbox.
 *
 * @example
 * ```ts
 * const options = ({ env, emails }: AuthOptionsContext) => ({
 *   plugins: [magicLink({ sendMagicLink: emails.sendMagicLink })],
 *   session: { expiresIn: Number(env.get("SESSION_DAYS") ?? 30) * 86_400 },
 * });
 * ```
 */
export interface AuthOptionsContext {
  env: EnvReader;
  /** Verification, reset, magic-link and OTP emails, queued in the request's transaction. */
  emails: AuthEmails;
}

/**
 * The app's part of the auth, as given to {@link defineAuth} (or `defineApp({ auth })`).
 *
 * @example
 * ```ts
 * const auth = defineAuth({
 *   schema,
 *   appName: "Notes",
 *   tables: { plugins: [admin()] },
 *   options: ({ emails }) => ({ plugins: [magicLink({ sendMagicLink: emails.sendMagicLink })] }),
 * });
 * ```
 */
export interface AppAuthOptions<S extends SchemaDefinition = SchemaDefinition> {
  schema: S;
  /** The name emails are signed with (default "Service Auth"). */
  appName?: string;
  /**
   * The options the auth tables depend on: plugins with tables or fields, `user.additionalFields`.
   * The same object the schema gives {@link authTables}; `auth generate` prints its tables.
   */
  tables?: AuthSchemaOptions;
  /** Indexes and fields added to the auth tables (as given to {@link authTables}). */
  extensions?: AuthExtensions;
  /**
   * The app's own Better Auth options, made per request: providers, extra plugins, session
   * lifetimes, `user` options. They win over the product's, except the database, the secret and
   * the platform plugin. Default: email and password sign-in.
   */
  options?: (ctx: AuthOptionsContext) => Partial<BetterAuthOptions>;
  /** Triggers on auth tables (e.g. `user.beforeCreate`), run in the auth write's transaction. */
  triggers?: AuthTriggers<S>;
  /** The app's wrapped mutation builder, so auth writes run application triggers. */
  internalMutation?: Parameters<typeof bindAuthData<S>>[0]["internalMutation"];
  /** Defaults turned off (each `false`), e.g. `{ rateLimit: false }`. */
  defaults?: AuthDefaultSwitches;
}

const AUDIT_PLUGIN_ID = "audit-trail";

/** The table options with what the defaults store: the shared rate-limit counts, the audit trail. */
function tableOptions(
  tables: AuthSchemaOptions | undefined,
  defaults: AuthDefaultSwitches,
): AuthSchemaOptions {
  const plugins = [...(tables?.plugins ?? [])].filter((p) => p.id !== AUDIT_PLUGIN_ID);
  if (defaults.auditTrail !== false) plugins.push(auditTrail());
  return { ...tables, rateLimit: { storage: "database", ...tables?.rateLimit }, plugins };
}

/**
 * The auth tables for the schema: those of `tables` (plugins, additional fields) plus what the
 * product's defaults store (`rateLimit` counts, `auditEvent` unless `defaults.auditTrail` is
 * false). Give the same `tables`, `extensions` and `defaults` to {@link defineAuth}.
 *
 * @example
 * ```ts
 * export default defineSchema({
 *   ...authTables({ plugins: [admin()] }),
 *   notes: defineTable({ userId: v.id("user"), body: v.string() }),
 * });
 * ```
 */
export function authTables<
  const O extends AuthSchemaOptions = { plugins: [] },
  const E extends AuthExtensions = {},
>(tables?: O, extensions?: E, defaults: AuthDefaultSwitches = {}) {
  return defineAuthTables(tableOptions(tables, defaults) as WithDefaultTables<O>, extensions as E);
}

/** `O` as the product stores it: with the shared rate-limit counts and the audit trail's table. */
export type WithDefaultTables<O extends AuthSchemaOptions> = Omit<O, "plugins" | "rateLimit"> & {
  rateLimit: { storage: "database" };
  plugins: [...(O["plugins"] extends readonly unknown[] ? O["plugins"] : []), ReturnType<typeof auditTrail>];
};

/** References to the product's function modules. */
const refs = {
  auth: anyApi.auth as AuthFunctions & Record<string, any>,
  mail: anyApi.mail as MailOutboxRefs,
  audit: anyApi.audit as any,
};

/**
 * The auth of an app: the Better Auth factories (`createAuth` for HTTP routes and actions,
 * `getAuth` inside a query or mutation), the bound auth data (`authData.getSession`, adapters)
 * and the function modules the product registers (`auth`, `mail`, `audit`, `admin`).
 *
 * @example
 * ```ts
 * // auth.ts
 * export const { createAuth, getAuth, authData } = defineAuth({ schema, appName: "Notes" });
 * ```
 */
export function defineAuth<S extends SchemaDefinition>(app: AppAuthOptions<S>) {
  const defaults: AuthDefaultSwitches = { ...app.defaults };
  const tables = tableOptions(app.tables, defaults);
  const appName = app.appName ?? "Service Auth";
  const authData = bindAuthData({
    authFunctions: refs.auth,
    schema: app.schema,
    internalMutation: app.internalMutation,
    triggers: app.triggers,
  });

  function options(
    ctx: ActionCtx | QueryCtx<any> | MutationCtx<any>,
    database: BetterAuthOptions["database"],
  ): ProductAuthOptions {
    const { env } = ctx;
    const emails = authEmails(mailOutbox(ctx, refs.mail), appName);
    const own = app.options?.({ env, emails }) ?? {};
    return withAuthDefaults({
      baseURL: siteUrlOf(env),
      basePath: "/api/auth",
      // SITE_URL's origin and those of TRUSTED_ORIGINS: the cross-origin rule allows the same list.
      trustedOrigins: trustedOriginsOf(env),
      telemetry: { enabled: false },
      emailVerification: { sendVerificationEmail: emails.sendVerificationEmail, sendOnSignUp: true },
      ...own,
      secret: env.get("SERVICE_AUTH_SECRET"),
      database,
      emailAndPassword: {
        enabled: true,
        sendResetPassword: emails.sendResetPassword,
        ...own.emailAndPassword,
      },
      user: { ...tables.user, ...own.user },
      advanced: { cookiePrefix: "service-auth", ...own.advanced },
      ...(defaults.rateLimit === false ? { rateLimit: { ...own.rateLimit, enabled: false } } : {}),
      plugins: [
        backend({ authConfig: authConfig(env), jwks: env.get("JWKS") }),
        ...(tables.plugins ?? []),
        ...(own.plugins ?? []),
      ],
    });
  }

  /** Auth over the HTTP adapter: HTTP routes and actions. */
  const createAuth = (ctx: ActionCtx) => betterAuth(options(ctx, authData.httpAdapter(ctx)));
  /** Auth over the direct adapter: inside a query or mutation's own transaction. */
  const getAuth = (ctx: QueryCtx<any> | MutationCtx<any>) => betterAuth(options(ctx, authData.adapter(ctx)));

  const modules = {
    auth: {
      // The platform plugin (always in the options) provides the key endpoints these call.
      ...authData.createAuthFunctions(createAuth as unknown as KeyManagingCreateAuth),
      deleteExpired: expiredRowsCleanup(app.schema, {
        self: refs.auth.deleteExpired,
        internalMutation: app.internalMutation,
      }),
    },
    mail: mailOutboxFunctions({ self: refs.mail }),
    audit: createAuditFunctions({ self: refs.audit }),
    admin: createAdminFunctions(),
  };

  return {
    createAuth,
    getAuth,
    authData,
    /** The options the tables depend on, with the defaults' (for `auth generate`). */
    tables,
    extensions: app.extensions,
    defaults,
    modules,
    /** Marks this object as made by {@link defineAuth}. */
    kind: "service-auth.auth" as const,
  };
}

/** The options `betterAuth` gets; the platform plugin's endpoints (`getBackendToken`, keys) are typed. */
type ProductAuthOptions = Omit<BetterAuthOptions, "plugins"> & {
  plugins: [ReturnType<typeof backend>, ...NonNullable<BetterAuthOptions["plugins"]>];
};

type KeyManagingCreateAuth = Parameters<ReturnType<typeof bindAuthData>["createAuthFunctions"]>[0];

/**
 * What {@link defineAuth} returns.
 *
 * @example
 * ```ts
 * const auth: AuthDefinition<typeof schema> = defineAuth({ schema });
 * const session = await auth.authData.getSession(ctx);
 * ```
 */
export type AuthDefinition<S extends SchemaDefinition = SchemaDefinition> = ReturnType<typeof defineAuth<S>>;

/** The product's function modules, as the typed API sees them. */
export type ProductModules = AuthDefinition["modules"];
