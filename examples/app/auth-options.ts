/**
 * The Better Auth options the auth tables depend on: plugins and additional fields. The schema's
 * auth tables are made from them (schema.ts), the auth gets them (auth.ts), and
 * `npm run cli -- auth generate` prints the tables they need. A module of its own so the schema
 * can import it without importing auth.ts, which imports the schema.
 */
import type { BetterAuthOptions } from "better-auth";
import { admin, organization, twoFactor } from "better-auth/plugins";

export const authSchemaOptions = {
  // Declared so Better Auth returns the trigger-made `username` with the user (session, JWT claims).
  user: { additionalFields: { username: { type: "string", required: false, input: false } } },
  plugins: [
    admin(),
    // Organizations with members and invitations; the session records the active one.
    organization(),
    // TOTP second factor; the issuer is the name authenticator apps show.
    twoFactor({ issuer: "Service Auth example" }),
  ],
} satisfies BetterAuthOptions;

/** Looking users up by username (the `uniqueUsername` trigger, auth.ts). */
export const authTableExtensions = { user: { indexes: { username: ["username"] } } } as const;
