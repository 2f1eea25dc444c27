import { AppError, v } from "service-auth/server";
import { mutation, query } from "./functions.ts";

/** The newest 50 messages, oldest first. */
export const list = query({
  args: {},
  handler: async (ctx) => {
    const newest = await ctx.db.query("messages").order("desc").take(50);
    return newest.reverse();
  },
});

export const send = mutation({
  args: { body: v.string() },
  handler: async (ctx, { body }) => {
    const text = body.trim();
    if (!text) throw new AppError("BAD_REQUEST", "A message needs some text");
    return ctx.db.insert("messages", { body: text, author: "anonymous" });
  },
});
