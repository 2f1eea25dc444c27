/**
 * Authentication of the example app (requirements §4.3): email + password, the admin,
 * organization and two-factor plugins (auth-options.ts), magic links, email OTP, social
 * providers, an OpenID Connect provider when `OIDC_ISSUER` is set, and fresh sessions for the
 * sensitive operations. The product (`defineAuth`) adds the rest: site URL, secret and keys,
 * mail through the outbox, audit trail, rate limits, field limits and the `auth` functions.
 */
import type { BetterAuthOptions } from "better-auth";
import { emailOTP, genericOAuth, magicLink } from "better-auth/plugins";
import { defineAuth, freshSessionFor } from "service-auth/app";
import type { EnvReader, MutationCtx } from "service-auth/server";
import { authSchemaOptions, authTableExtensions } from "./auth-options.ts";
import { type DataModel, internalMutation } from "./functions.ts";
import schema from "./schema.ts";

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

export const auth = defineAuth({
  schema,
  appName: "Service Auth example",
  tables: authSchemaOptions,
  extensions: authTableExtensions,
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
  options: ({ env, emails }) => ({
    user: { deleteUser: { enabled: true } },
    // freshAge: how recently the session must have been created or refreshed for the sensitive
    // operations (`freshSessionFor`: change password, delete account, set role); Better Auth's default.
    session: { expiresIn: 60 * 60 * 24 * 30, updateAge: 60 * 60 * 24 * 15, freshAge: 60 * 60 * 24 },
    socialProviders: socialProviders(env),
    plugins: [
      magicLink({ sendMagicLink: emails.sendMagicLink }),
      emailOTP({ sendVerificationOTP: emails.sendVerificationOTP }),
      ...oidcProvider(env),
      freshSessionFor(),
    ],
  }),
});

/** Auth over the HTTP adapter (routes, actions), over the direct one (queries, mutations), and its data. */
export const { createAuth, getAuth, authData } = auth;

/** The options the auth tables depend on (plugins, additional fields): see auth-options.ts. */
export { authSchemaOptions };
