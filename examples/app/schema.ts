import { defineAuthTables } from "service-auth/auth";
import { defineSchema, defineTable, v } from "service-auth/server";

export default defineSchema({
  // The auth tables of SPEC §2, with the example's `username` (filled by a beforeCreate trigger).
  ...defineAuthTables({
    user: { fields: { username: v.optional(v.string()) }, indexes: { username: ["username"] } },
  }),
  /** Rate-limit counts, shared by every instance (`withAuthDefaults`; README "Limits"). */
  rateLimit: defineAuthTables({ rateLimit: { storage: "database" } }).rateLimit,
  /** One profile per user, made by the onCreate trigger. */
  profiles: defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]),
  /** Counters kept by application triggers (e.g. the user count). */
  counters: defineTable({ name: v.string(), value: v.number() }).index("name", ["name"]),
  messages: defineTable({ body: v.string(), author: v.string(), userId: v.id("user") }),
});
