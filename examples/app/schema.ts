import { defineSchema, defineTable, v } from "service-auth/server";

export default defineSchema({
  messages: defineTable({
    body: v.string(),
    author: v.string(),
  }),
});
