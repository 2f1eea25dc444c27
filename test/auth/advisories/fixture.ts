/**
 * A service with the auth integration and the Better Auth plugins an advisory test needs (given
 * per test file), their tables in the schema, and an outbox collecting what the
 * plugins would email. `SERVICE_AUTH_ACCEPT_ADVISORIES` is read per request, so a test switches a
 * mitigation off and on with `accept(...)` to show the attack first and then its refusal.
 */
import type { BetterAuthOptions, BetterAuthPlugin } from "better-auth";
import { betterAuth } from "better-auth";
import { admin, anonymous, organization, twoFactor } from "better-auth/plugins";
import {
  type AuthFunctions,
  authConfig,
  authHttpRouter,
  backend,
  defineAuthTables,
  ensureAuthEnv,
  getAuthUserId,
  httpAdapter,
  siteUrlOf,
} from "service-auth/auth";
import {
  type ActionCtx,
  anyApi,
  defineSchema,
  type EnvReader,
  functionsFor,
  type QueryCtx,
} from "service-auth/server";
import { it } from "vitest";
import { ACCEPT_ADVISORIES_VAR } from "../../../src/auth/advisories/catalog.ts";
import { createApi } from "../../../src/auth/data/functions.ts";
import { keyFunctions } from "../../../src/auth/keys/functions.ts";
import { ON_PINNED_LINE } from "../../helpers/better-auth-line.ts";
import { browserAt, type FixtureBrowser, freePort } from "../../helpers/browser.ts";
import { PASSWORD } from "../../helpers/example-app.ts";
import { callFunction, type JsonResponse } from "../../helpers/http.ts";
import { startTestService, type TestService } from "../../helpers/service.ts";

export { PASSWORD };

/**
 * A reproduction of an attack on 1.4.9 with the mitigation off. The newest patched line fixes it
 * upstream (docs/security.md), so there the attack fails whether or not the mitigation is on and
 * the reproduction is skipped; the mitigated behaviour is tested on both lines.
 */
export const itOnPinnedLine = it.skipIf(!ON_PINNED_LINE);

/**
 * The auth tables plus the organization, two-factor, anonymous and admin plugins' tables and
 * fields, as the installed Better Auth describes them (1.7 adds fields, e.g. `twoFactor.verified`).
 */
export const schema = defineSchema(
  defineAuthTables({ plugins: [organization(), twoFactor(), anonymous(), admin()] }),
);

const MODELS = [
  "user",
  "session",
  "account",
  "verification",
  "jwks",
  "organization",
  "member",
  "invitation",
  "twoFactor",
];

/** What the plugins would have emailed, newest last. */
export interface Outbox {
  magicLinks: { email: string; url: string; token: string }[];
  otps: { email: string; otp: string; type: string }[];
  invitations: { email: string; id: string }[];
}

export interface AdvisoryFixtureOptions {
  /** The plugins under test, after `backend`; `outbox` receives what they send. */
  plugins: (outbox: Outbox) => BetterAuthPlugin[];
  /** More Better Auth options (merged over the fixture's). */
  options?: Partial<BetterAuthOptions>;
}

export interface AdvisoryFixture {
  service: TestService;
  url: string;
  outbox: Outbox;
  browser(): FixtureBrowser;
  /** Accepts these advisories (their mitigations off) until `accept()` with none. */
  accept(...ids: string[]): Promise<void>;
  /** Signs up with email and password (the user stays unverified). */
  signUp(email: string, password?: string): Promise<{ browser: FixtureBrowser; response: JsonResponse }>;
  /** `probe:userId` with a Bearer token: the user step 2 resolves the token to, or the error. */
  whoami(token: string | undefined): Promise<JsonResponse>;
  /** Rows of a table (direct read, for assertions). */
  rows(table: string): Promise<Record<string, any>[]>;
  close(): Promise<void>;
}

export async function startAdvisoryFixture(options: AdvisoryFixtureOptions): Promise<AdvisoryFixture> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const outbox: Outbox = { magicLinks: [], otps: [], invitations: [] };
  const authFunctions = anyApi.auth as AuthFunctions;

  const authOptions = (
    env: EnvReader,
    database: BetterAuthOptions["database"],
    withPlugins = true,
  ): BetterAuthOptions => {
    const siteUrl = siteUrlOf(env);
    return {
      baseURL: siteUrl,
      secret: env.get("SERVICE_AUTH_SECRET"),
      database,
      emailAndPassword: { enabled: true },
      trustedOrigins: [siteUrl],
      advanced: { cookiePrefix: "service-auth" },
      telemetry: { enabled: false },
      logger: { disabled: true },
      ...options.options,
      plugins: [
        backend({
          authConfig: authConfig(env),
          jwks: env.get("JWKS"),
          acceptAdvisories: env.get(ACCEPT_ADVISORIES_VAR),
        }),
        ...(withPlugins ? options.plugins(outbox) : []),
      ],
    };
  };
  const createAuth = (ctx: ActionCtx) =>
    betterAuth(authOptions(ctx.env, httpAdapter(ctx, { authFunctions, schema })));
  const raw = functionsFor(schema);
  // The options are assembled per test file, so the plugin endpoints' types are not inferred.
  // Keys come from an auth without the plugins under test: Better Auth 1.4.9's anonymous plugin
  // crashes on the backend plugin's path-less server endpoints (its matcher reads `ctx.path`).
  const keyAuth = (ctx: ActionCtx) =>
    betterAuth(authOptions(ctx.env, httpAdapter(ctx, { authFunctions, schema }), false));
  const auth = { ...createApi(schema, { models: MODELS }), ...keyFunctions(keyAuth as any) };
  const probe = {
    userId: raw.query({ args: {}, handler: (ctx: QueryCtx<any>) => getAuthUserId(ctx) }),
  };

  const service = await startTestService({
    schema,
    modules: { auth, probe },
    auth: (env) => authConfig(env),
    routes: authHttpRouter({ createAuth }),
    prepare: async (b) => {
      await ensureAuthEnv(b, anyApi.auth.getLatestJwks);
    },
    port,
    envDefaults: { SITE_URL: url },
  });

  return {
    service,
    url,
    outbox,
    browser: () => browserAt(url),
    async accept(...ids) {
      if (ids.length === 0) await service.backend.env.remove(ACCEPT_ADVISORIES_VAR);
      else await service.backend.env.set(ACCEPT_ADVISORIES_VAR, ids.join(","));
    },
    async signUp(email, password = PASSWORD) {
      const browser = browserAt(url);
      const response = await browser.send("POST", "/api/auth/sign-up/email", {
        email,
        password,
        name: "Advisory",
      });
      return { browser, response };
    },
    whoami: (token) =>
      callFunction(url, "query", "probe:userId", {}, token ? { authorization: `Bearer ${token}` } : {}),
    rows: (table) => service.backend.read((db: any) => db.query(table).collect()),
    close: () => service.close(),
  };
}
