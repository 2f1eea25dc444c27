import { authTables } from "service-auth/app";
import { defineSchema, defineTable, v } from "service-auth/server";
import { authSchemaOptions, authTableExtensions } from "./auth-options.ts";

export default defineSchema({
  // The auth tables of the auth options (core, admin, organization, two-factor; the product's
  // rate-limit counts and audit trail; the example's `username`, filled by a beforeCreate trigger).
  ...authTables(authSchemaOptions, authTableExtensions),
  /** One profile per user, made by the onCreate trigger. */
  profiles: defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]),
  /** Counters kept by application triggers (e.g. the user count). */
  counters: defineTable({ name: v.string(), value: v.number() }).index("name", ["name"]),
  messages: defineTable({ body: v.string(), author: v.string(), userId: v.id("user") }),
});
