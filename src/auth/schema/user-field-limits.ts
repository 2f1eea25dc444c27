/**
 * Length limits of the user fields a client chooses (name, email, image, username), checked on
 * every write of a user whatever the endpoint (sign-up, update-user, admin, social sign-in). An
 * unbounded name was stored as sent and then made the JWT cookie exceed header limits.
 */
import type { BetterAuthOptions } from "better-auth";
import { APIError } from "better-auth/api";

/** Longest accepted value of each field, in characters. */
export const USER_FIELD_LIMITS: Readonly<Record<string, number>> = Object.freeze({
  name: 256,
  email: 254,
  image: 2048,
  username: 64,
});

/** Throws a 400 naming the first field of `user` over its limit. */
export function checkUserFieldLengths(user: Record<string, unknown>): void {
  for (const [field, max] of Object.entries(USER_FIELD_LIMITS)) {
    const value = user[field];
    if (typeof value === "string" && value.length > max) {
      // An APIError is what a Better Auth hook throws to answer; the code is registered (with
      // this status) in src/backend/errors.ts.
      throw new APIError("BAD_REQUEST", {
        code: "FIELD_TOO_LONG",
        message: `${field} must be at most ${max} characters`,
        field,
      });
    }
  }
}

type DatabaseHooks = NonNullable<BetterAuthOptions["databaseHooks"]>;

/** `hooks` with the length check run before an app's own user create/update hooks. */
export function withUserFieldLimits(hooks: DatabaseHooks | undefined): DatabaseHooks {
  const user = hooks?.user;
  return {
    ...hooks,
    user: {
      ...user,
      create: {
        ...user?.create,
        before: async (data, ctx) => {
          checkUserFieldLengths(data);
          return user?.create?.before?.(data, ctx);
        },
      },
      update: {
        ...user?.update,
        before: async (data, ctx) => {
          checkUserFieldLengths(data);
          return user?.update?.before?.(data, ctx);
        },
      },
    },
  };
}
