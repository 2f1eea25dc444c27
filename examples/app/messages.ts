import { getAuthUserId } from "service-auth/app";
import { AppError, v } from "service-auth/server";
import { mutation, query } from "./functions.ts";

const MAX_LENGTH = 2000;

/** The newest 50 messages, oldest first (signed-in users only). */
export const list = query({
  args: {},
  handler: async (ctx) => {
    if (!(await getAuthUserId(ctx))) throw new AppError("UNAUTHORIZED", "Sign in first");
    const newest = await ctx.db.query("messages").order("desc").take(50);
    return newest
      .reverse()
      .map((m) => ({ _id: m._id, _creationTime: m._creationTime, body: m.body, author: m.author }));
  },
});

export const send = mutation({
  args: { body: v.string() },
  handler: async (ctx, { body }) => {
    const userId = await getAuthUserId(ctx);
    if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
    const text = body.trim();
    if (!text) throw new AppError("BAD_REQUEST", "A message needs some text");
    if (text.length > MAX_LENGTH)
      throw new AppError("BAD_REQUEST", `A message has at most ${MAX_LENGTH} characters`);
    const user = await ctx.db.get("user", userId);
    return ctx.db.insert("messages", {
      body: text,
      author: user?.username ?? user?.name ?? "unknown",
      userId,
    });
  },
});
