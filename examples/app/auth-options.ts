/**
 * The Better Auth options the auth tables depend on: plugins and additional fields. `betterAuth`
 * gets them (auth.ts), the schema's auth tables are made from them (schema.ts), and
 * `npm run cli -- auth generate` prints the tables they need (app.ts `commands`). A module of its
 * own so the schema can import it without importing auth.ts, which imports the schema.
 */
import type { BetterAuthOptions } from "better-auth";
import { admin, organization, twoFactor } from "better-auth/plugins";
import { auditTrail } from "service-auth/auth";

export const authSchemaOptions = {
  // Declared so Better Auth returns the trigger-made `username` with the user (session, JWT claims).
  user: { additionalFields: { username: { type: "string", required: false, input: false } } },
  // The `rateLimit` table: sign-in, reset, OTP and token counts shared by every instance
  // (`withAuthDefaults` stores them there; docs/app-guide.md "Limits"). Only the schema reads this option.
  rateLimit: { storage: "database" },
  plugins: [
    admin(),
    // Organizations with members and invitations; the session records the active one.
    organization(),
    // TOTP second factor; the issuer is the name authenticator apps show.
    twoFactor({ issuer: "Service Auth example" }),
    // Security events in the `auditEvent` table (docs/operations.md "Audit trail").
    auditTrail(),
  ],
} satisfies BetterAuthOptions;
