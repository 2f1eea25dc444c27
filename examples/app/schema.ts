import { defineAuthTables } from "service-auth/auth";
import { defineSchema, defineTable, v } from "service-auth/server";
import { authSchemaOptions } from "./auth-options.ts";

export default defineSchema({
  // The auth tables of the auth options (core, admin, organization, two-factor, the shared
  // rate-limit counts; the example's `username`, filled by a beforeCreate trigger), with an index
  // for looking users up by username.
  ...defineAuthTables(authSchemaOptions, { user: { indexes: { username: ["username"] } } }),
  /** One profile per user, made by the onCreate trigger. */
  profiles: defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]),
  /** Counters kept by application triggers (e.g. the user count). */
  counters: defineTable({ name: v.string(), value: v.number() }).index("name", ["name"]),
  messages: defineTable({ body: v.string(), author: v.string(), userId: v.id("user") }),
});
