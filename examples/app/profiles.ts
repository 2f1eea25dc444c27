import { getAuthUserId } from "service-auth/app";
import { AppError } from "service-auth/server";
import { query } from "./functions.ts";

/** The signed-in user's profile (made by the user onCreate trigger). */
export const mine = query({
  args: {},
  handler: async (ctx) => {
    const userId = await getAuthUserId(ctx);
    if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
    return ctx.db
      .query("profiles")
      .withIndex("userId", (q) => q.eq("userId", userId))
      .unique();
  },
});
