import { getAuthUserId, recordAuditEvent } from "service-auth/app";
import { AppError, v } from "service-auth/server";
import { authData } from "./auth.ts";
import { action, internalMutation, query } from "./functions.ts";

/** The signed-in user, or `UNAUTHORIZED`. */
export const me = query({
  args: {},
  handler: async (ctx) => {
    const userId = await getAuthUserId(ctx);
    if (!userId) throw new AppError("UNAUTHORIZED", "Sign in first");
    const user = await ctx.db.get("user", userId);
    if (!user) throw new AppError("UNAUTHORIZED", "Sign in first");
    return {
      _id: user._id,
      name: user.name,
      email: user.email,
      username: user.username ?? null,
      role: user.role ?? null,
      twoFactorEnabled: user.twoFactorEnabled ?? false,
    };
  },
});

/** The caller's session document (with `activeOrganizationId`), or `UNAUTHORIZED`. */
export const session = query({
  args: {},
  handler: async (ctx) => {
    const doc = await authData.getSession(ctx);
    if (!doc) throw new AppError("UNAUTHORIZED", "Sign in first");
    return doc;
  },
});

/** The same document read from an action (through the auth data functions), or `UNAUTHORIZED`. */
export const sessionFromAction = action({
  args: {},
  handler: async (ctx) => {
    const doc = await authData.getSession(ctx);
    if (!doc) throw new AppError("UNAUTHORIZED", "Sign in first");
    return doc;
  },
});

/** Number of users, kept by an application trigger (public). */
export const count = query({
  args: {},
  handler: async (ctx) => {
    const counter = await ctx.db
      .query("counters")
      .withIndex("name", (q) => q.eq("name", "users"))
      .unique();
    return counter?.value ?? 0;
  },
});

/** Makes a user an administrator (or changes their role): `npm run cli -- run users:setRole '{"email":…,"role":"admin"}'`. */
export const setRole = internalMutation({
  args: { email: v.string(), role: v.string() },
  handler: async (ctx, { email, role }) => {
    const user = await ctx.db
      .query("user")
      .withIndex("email", (q) => q.eq("email", email.toLowerCase()))
      .unique();
    if (!user) throw new AppError("NOT_FOUND", `No user with email ${email}`);
    await ctx.db.patch(user._id, { role, updatedAt: Date.now() });
    // In the same transaction as the change: the audit trail says who got which role, and how.
    await recordAuditEvent(ctx.db, {
      type: "role.changed",
      targetId: user._id,
      email: user.email,
      details: { role, source: "cli" },
    });
    return { _id: user._id, email: user.email, role };
  },
});
