/**
 * Authentication of the example app (requirements §4.3): Better Auth with email + password, the admin,
 * organization and two-factor plugins (auth-options.ts) and the `backend` plugin, storing
 * everything in this app's tables. Email flows
 * (verification, password reset, magic link, email OTP) go through the mail setting (`SMTP_URL`,
 * `MAIL_FROM`; the development outbox without them; queued and sent after the commit, mail.ts), an OpenID Connect provider signs in through
 * generic OAuth when `OIDC_ISSUER` is set, and the sensitive operations need a fresh session.
 *
 * This module is also the app's `auth` function module: its exports `create` … `deleteMany`,
 * `getLatestJwks` and `rotateKeys` are the internal data functions (`auth:rotateKeys` in the CLI).
 */
import { type BetterAuthOptions, betterAuth } from "better-auth";
import { emailOTP, genericOAuth, magicLink } from "better-auth/plugins";
import {
  type AuthFunctions,
  authConfig,
  authEmails,
  backend,
  bindAuthData,
  expiredRowsCleanup,
  freshSessionFor,
  mailOutbox,
  siteUrlOf,
  trustedOriginsOf,
  withAuthDefaults,
} from "service-auth/auth";
import { type ActionCtx, anyApi, type EnvReader, type MutationCtx, type QueryCtx } from "service-auth/server";
import { authSchemaOptions } from "./auth-options.ts";
import { type DataModel, internalMutation } from "./functions.ts";
import { mailRefs } from "./mail.ts";
import schema from "./schema.ts";

/** References to this module's data functions (`internal.auth`). */
const authFunctions: AuthFunctions = anyApi.auth;

/** A username from the email's local part, made unique with a number when taken. */
async function uniqueUsername(ctx: MutationCtx<DataModel>, email: string): Promise<string> {
  const base =
    email
      .split("@")[0]
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, "") || "user";
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? base : `${base}${n}`;
    const taken = await ctx.db
      .query("user")
      .withIndex("username", (q) => q.eq("username", candidate))
      .first();
    if (!taken) return candidate;
  }
}

export const authData = bindAuthData({
  authFunctions,
  schema,
  // Auth writes go through the app's wrapper, so the user-count trigger runs on sign-up.
  internalMutation,
  triggers: {
    user: {
      beforeCreate: async (ctx, data) => ({ ...data, username: await uniqueUsername(ctx, data.email) }),
      onCreate: async (ctx, user) => {
        await ctx.db.insert("profiles", { userId: user._id, bio: "" });
      },
      // A removed user takes their profile along (same transaction as the delete).
      onDelete: async (ctx, user) => {
        const profile = await ctx.db
          .query("profiles")
          .withIndex("userId", (q) => q.eq("userId", user._id))
          .unique();
        if (profile) await ctx.db.delete(profile._id);
      },
    },
  },
});

/** Social providers configured by `<PROVIDER>_CLIENT_ID` / `<PROVIDER>_CLIENT_SECRET`. */
function socialProviders(env: EnvReader): BetterAuthOptions["socialProviders"] {
  const out: Record<string, { clientId: string; clientSecret: string }> = {};
  for (const provider of ["github", "google", "discord", "gitlab", "microsoft"]) {
    const clientId = env.get(`${provider.toUpperCase()}_CLIENT_ID`);
    const clientSecret = env.get(`${provider.toUpperCase()}_CLIENT_SECRET`);
    if (clientId && clientSecret) out[provider] = { clientId, clientSecret };
  }
  return out;
}

/**
 * An OpenID Connect provider (Keycloak, Auth0, Okta, …) from `OIDC_ISSUER`, `OIDC_CLIENT_ID` and
 * `OIDC_CLIENT_SECRET`: sign-in at `POST /api/auth/sign-in/oauth2 {"providerId":"oidc"}`, callback
 * `/api/auth/oauth2/callback/oidc`. PKCE is on (docs/security.md); the state stays in the database.
 */
function oidcProvider(env: EnvReader) {
  const issuer = env.get("OIDC_ISSUER");
  const clientId = env.get("OIDC_CLIENT_ID");
  const clientSecret = env.get("OIDC_CLIENT_SECRET");
  if (!issuer || !clientId || !clientSecret) return [];
  const config = {
    providerId: "oidc",
    discoveryUrl: `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`,
    clientId,
    clientSecret,
    scopes: ["openid", "email", "profile"],
    pkce: true,
  };
  return [genericOAuth({ config: [config] })];
}

/** The options the auth tables depend on (plugins, additional fields): see auth-options.ts. */
export { authSchemaOptions };

function authOptions(
  ctx: ActionCtx | QueryCtx<DataModel> | MutationCtx<DataModel>,
  database: BetterAuthOptions["database"],
) {
  const { env } = ctx;
  const siteUrl = siteUrlOf(env);
  // Emails are queued in the request's transaction and sent after it commits (mail.ts).
  const emails = authEmails(mailOutbox(ctx, mailRefs), "Service Auth example");
  return withAuthDefaults({
    baseURL: siteUrl,
    basePath: "/api/auth",
    secret: env.get("SERVICE_AUTH_SECRET"),
    database,
    emailAndPassword: { enabled: true, sendResetPassword: emails.sendResetPassword },
    emailVerification: { sendVerificationEmail: emails.sendVerificationEmail, sendOnSignUp: true },
    user: { ...authSchemaOptions.user, deleteUser: { enabled: true } },
    // freshAge: how recently the session must have been created or refreshed for the sensitive
    // operations (`freshSessionFor`: change password, delete account, set role); Better Auth's default.
    session: { expiresIn: 60 * 60 * 24 * 30, updateAge: 60 * 60 * 24 * 15, freshAge: 60 * 60 * 24 },
    socialProviders: socialProviders(env),
    // SITE_URL's origin and those of TRUSTED_ORIGINS: the cross-origin rule allows the same list.
    trustedOrigins: trustedOriginsOf(env),
    advanced: { cookiePrefix: "service-auth" },
    telemetry: { enabled: false },
    plugins: [
      backend({ authConfig: authConfig(env), jwks: env.get("JWKS") }),
      ...authSchemaOptions.plugins,
      magicLink({ sendMagicLink: emails.sendMagicLink }),
      emailOTP({ sendVerificationOTP: emails.sendVerificationOTP }),
      ...oidcProvider(env),
      freshSessionFor(),
    ],
  } satisfies BetterAuthOptions);
}

/** Auth over the HTTP adapter: HTTP routes and actions. */
export const createAuth = (ctx: ActionCtx) => betterAuth(authOptions(ctx, authData.httpAdapter(ctx)));

/** Auth over the direct adapter: inside a query or mutation's own transaction. */
export const getAuth = (ctx: QueryCtx<DataModel> | MutationCtx<DataModel>) =>
  betterAuth(authOptions(ctx, authData.adapter(ctx)));

export const {
  create,
  findOne,
  findMany,
  count,
  updateOne,
  updateMany,
  deleteOne,
  deleteMany,
  consumeOne,
  incrementOne,
  getLatestJwks,
  rotateKeys,
  retireKeys,
  checkOptions,
} = authData.createAuthFunctions(createAuth);

/** Deletes expired sessions and verification rows in batches; run by the app's cron (app.ts). */
export const deleteExpired = expiredRowsCleanup(schema, {
  self: anyApi.auth.deleteExpired,
  internalMutation,
});
