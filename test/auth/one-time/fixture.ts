/**
 * Services with the auth integration and every Better Auth plugin that issues a one-time credential
 * (email OTP, phone OTP, magic link, two-factor, organization invitations, one-time tokens, device
 * codes, API keys) and email verification links, an in-memory outbox of what they would email or
 * text, and rate limits off, so a test sees the credential's own rules alone. `startOneTimeApps` starts one instance on a temp SQLite file, or
 * two instances on one PostgreSQL database (`databaseUrl`): the parallel requests of a test are
 * spread over them, as a load balancer would.
 */
import type { BetterAuthOptions, BetterAuthPlugin } from "better-auth";
import { betterAuth } from "better-auth";
import * as betterAuthPlugins from "better-auth/plugins";
import {
  deviceAuthorization,
  emailOTP,
  magicLink,
  oneTimeToken,
  organization,
  phoneNumber,
  twoFactor,
} from "better-auth/plugins";
import {
  type AuthFunctions,
  auditTrail,
  authConfig,
  authHttpRouter,
  backend,
  defineAuthTables,
  ensureAuthEnv,
  getAuthUserId,
  httpAdapter,
  siteUrlOf,
} from "service-auth/auth";
import { type ActionCtx, anyApi, defineSchema, functionsFor, type QueryCtx } from "service-auth/server";
import { createApi } from "../../../src/auth/data/functions.ts";
import { keyFunctions } from "../../../src/auth/keys/functions.ts";
import { ON_PINNED_LINE } from "../../helpers/better-auth-line.ts";
import { browserAt, type FixtureBrowser, freePort } from "../../helpers/browser.ts";
import { PASSWORD } from "../../helpers/example-app.ts";
import { callFunction, type JsonResponse } from "../../helpers/http.ts";
import { startTestService, type TestService } from "../../helpers/service.ts";

export { PASSWORD };

/**
 * The api-key plugin from where the installed line has it (as test/helpers/api-key-plugin.ts),
 * typed loosely: the device-code test runs on the newest line only, and its type check there
 * (`typecheck:next`) reaches this file.
 */
const apiKey: (options?: Record<string, unknown>) => BetterAuthPlugin = ON_PINNED_LINE
  ? (betterAuthPlugins as unknown as Record<string, any>).apiKey
  : (await import(/* @vite-ignore */ ["@better-auth", "api-key"].join("/"))).apiKey;

/** Attempts an email OTP allows (Better Auth's default). */
export const OTP_ATTEMPTS = 3;

const plugins = (outbox: Outbox, otpAttempts: number) => [
  emailOTP({
    allowedAttempts: otpAttempts,
    sendVerificationOTP: async ({ email, otp, type }) => void outbox.otps.push({ email, otp, type }),
  }),
  magicLink({ sendMagicLink: async ({ email, token }) => void outbox.magicLinks.push({ email, token }) }),
  twoFactor({
    otpOptions: {
      sendOTP: async ({ user, otp }) => void outbox.otps.push({ email: user.email, otp, type: "2fa" }),
    },
  }),
  organization({
    sendInvitationEmail: async ({ email, id }) => void outbox.invitations.push({ email, id }),
  }),
  phoneNumber({
    allowedAttempts: otpAttempts,
    sendOTP: async ({ phoneNumber, code }) => void outbox.texts.push({ phoneNumber, code, type: "verify" }),
    sendPasswordResetOTP: async ({ phoneNumber, code }) =>
      void outbox.texts.push({ phoneNumber, code, type: "reset" }),
    // A number verified for the first time signs a new user up.
    signUpOnVerification: { getTempEmail: (phone) => `${phone.replace(/\D/g, "")}@phone.example.com` },
  }),
  oneTimeToken(),
  // Refused on 1.4.9 for an unfixed advisory (src/auth/advisories/catalog.ts): on the patched line only.
  ...(ON_PINNED_LINE ? [] : [deviceAuthorization({ expiresIn: "10m", interval: "1s" })]),
  // A key stands for its user's session on any route, each use counted against its `remaining`.
  apiKey({ enableSessionForAPIKeys: true }),
  auditTrail(),
];

/** The tables of the auth integration and of every plugin above. */
export const schema = defineSchema(
  defineAuthTables({
    plugins: plugins(emptyOutbox(), OTP_ATTEMPTS),
  }),
);

/** What the plugins would have emailed or texted, newest last (one outbox for every instance). */
export interface Outbox {
  otps: { email: string; otp: string; type: string }[];
  magicLinks: { email: string; token: string }[];
  invitations: { email: string; id: string }[];
  resets: { email: string; token: string }[];
  /** Email verification links (`/verify-email?token=…`). */
  verifications: { email: string; token: string }[];
  /** Phone OTPs: to verify the number (and sign in), or to reset the password. */
  texts: { phoneNumber: string; code: string; type: "verify" | "reset" }[];
}

function emptyOutbox(): Outbox {
  return { otps: [], magicLinks: [], invitations: [], resets: [], verifications: [], texts: [] };
}

export interface OneTimeApps {
  /** Base URLs of the instances (one on SQLite, two on PostgreSQL). */
  urls: string[];
  services: TestService[];
  outbox: Outbox;
  /** A browser of instance `i` (default the first). */
  browser(i?: number): FixtureBrowser;
  /** Signs up with email and password on the first instance. */
  signUp(email: string): Promise<{ browser: FixtureBrowser; userId: string }>;
  /** `probe:userId` with a Bearer token: the user it resolves to, or the error. */
  whoami(token: string | undefined): Promise<JsonResponse>;
  rows(table: string): Promise<Record<string, any>[]>;
  close(): Promise<void>;
}

export interface OneTimeOptions {
  /** `postgres://…`: two instances on that database; default one instance on a temp SQLite file. */
  databaseUrl?: string;
  /** Attempts an email or phone OTP allows (default {@link OTP_ATTEMPTS}). */
  otpAttempts?: number;
  /** `emailVerification.autoSignInAfterVerification` (default off, Better Auth's default). */
  autoSignInAfterVerification?: boolean;
}

export async function startOneTimeApps(options: OneTimeOptions = {}): Promise<OneTimeApps> {
  const outbox = emptyOutbox();
  const authFunctions = anyApi.auth as AuthFunctions;
  const authOptions = (ctx: ActionCtx): BetterAuthOptions => {
    const siteUrl = siteUrlOf(ctx.env);
    return {
      baseURL: siteUrl,
      secret: ctx.env.get("SERVICE_AUTH_SECRET"),
      database: httpAdapter(ctx, { authFunctions, schema }),
      emailAndPassword: {
        enabled: true,
        sendResetPassword: async ({ user, token }) => void outbox.resets.push({ email: user.email, token }),
      },
      emailVerification: {
        sendVerificationEmail: async ({ user, token }) =>
          void outbox.verifications.push({ email: user.email, token }),
        autoSignInAfterVerification: options.autoSignInAfterVerification ?? false,
      },
      trustedOrigins: [siteUrl],
      advanced: { cookiePrefix: "service-auth" },
      rateLimit: { enabled: false },
      telemetry: { enabled: false },
      logger: { disabled: true },
      plugins: [
        backend({ authConfig: authConfig(ctx.env), jwks: ctx.env.get("JWKS") }),
        ...plugins(outbox, options.otpAttempts ?? OTP_ATTEMPTS),
      ],
    };
  };
  const createAuth = (ctx: ActionCtx) => betterAuth(authOptions(ctx));
  const raw = functionsFor(schema);
  const auth = { ...createApi(schema), ...keyFunctions(createAuth as any) };
  const probe = {
    userId: raw.query({ args: {}, handler: (ctx: QueryCtx<any>) => getAuthUserId(ctx) }),
  };
  const instances = options.databaseUrl ? 2 : 1;
  const ports = await Promise.all(Array.from({ length: instances }, () => freePort()));
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const services: TestService[] = [];
  for (const port of ports) {
    services.push(
      await startTestService({
        schema,
        modules: { auth, probe },
        auth: (env) => authConfig(env),
        routes: authHttpRouter({ createAuth }),
        databaseUrl: options.databaseUrl,
        prepare: async (b) => {
          await ensureAuthEnv(b, anyApi.auth.getLatestJwks);
        },
        port,
        // Every instance answers for the first one's origin (one site behind a load balancer).
        envDefaults: { SITE_URL: urls[0] },
      }),
    );
  }
  const [first] = services;
  return {
    urls,
    services,
    outbox,
    browser: (i = 0) => {
      // Every instance is the one site: the first URL's origin is the trusted one.
      const at = browserAt(urls[i % urls.length]);
      return {
        jar: at.jar,
        send: (method, path, body, headers) => at.send(method, path, body, { origin: urls[0], ...headers }),
      };
    },
    async signUp(email) {
      const browser = browserAt(urls[0]);
      const response = await browser.send("POST", "/api/auth/sign-up/email", {
        email,
        password: PASSWORD,
        name: "One time",
      });
      if (response.status !== 200) throw new Error(`sign-up failed: ${response.status} ${response.text}`);
      return { browser, userId: response.body.user.id };
    },
    whoami: (token) =>
      callFunction(urls[0], "query", "probe:userId", {}, token ? { authorization: `Bearer ${token}` } : {}),
    rows: (table) => first.backend.read((db: any) => db.query(table).collect()),
    async close() {
      await Promise.all(services.map((s) => s.close()));
    },
  };
}

/** Runs `n` calls of `request` at once (call `i` gets `i`) and returns their answers in call order. */
export function inParallel<T>(n: number, request: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => request(i)));
}

/** How many answers have each status, e.g. `{ 200: 1, 400: 9 }`. */
export function statusCounts(answers: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
