/**
 * The user field limits (`src/auth/schema/user-field-limits.ts`) as a unit: each documented limit is
 * accepted at its length and refused one character past it, with a 400 `FIELD_TOO_LONG` naming the
 * field and the limit; other fields and non-string values are not checked; and the database hooks
 * run the check before an application's own user hooks, whose answer they pass on, keeping every
 * other hook. (Through the HTTP routes: limits-http.test.ts.)
 */
import type { BetterAuthOptions } from "better-auth";
import { APIError } from "better-auth/api";
import { describe, expect, it } from "vitest";
import {
  checkUserFieldLengths,
  USER_FIELD_LIMITS,
  withUserFieldLimits,
} from "../../src/auth/schema/user-field-limits.ts";

type Hooks = NonNullable<BetterAuthOptions["databaseHooks"]>;
type Before = (data: Record<string, unknown>, ctx: unknown) => Promise<unknown>;

/** The refusal `run` throws, or a failure if it throws none. */
function refusal(run: () => unknown): APIError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(APIError);
    return error as APIError;
  }
  throw new Error("expected a refusal");
}
async function refusalOf(run: () => Promise<unknown>): Promise<APIError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

describe("checkUserFieldLengths", () => {
  it("has the documented limits (docs/app-guide.md, Limits)", () => {
    expect(USER_FIELD_LIMITS).toEqual({ name: 256, email: 254, image: 2048, username: 64 });
    expect(Object.isFrozen(USER_FIELD_LIMITS)).toBe(true);
  });

  it.each(Object.entries({ name: 256, email: 254, image: 2048, username: 64 }))(
    "accepts %s at its limit (%i) and refuses it one past, naming the field and the limit",
    (field, max) => {
      expect(() => checkUserFieldLengths({ [field]: "x".repeat(max) })).not.toThrow();
      const error = refusal(() => checkUserFieldLengths({ [field]: "x".repeat(max + 1) }));
      expect(error.status).toBe("BAD_REQUEST");
      expect(error.statusCode).toBe(400);
      expect(error.body).toEqual({
        code: "FIELD_TOO_LONG",
        message: `${field} must be at most ${max} characters`,
        field,
      });
    },
  );

  it("names the first field over its limit, in the order name, email, image, username", () => {
    const long = { username: "u".repeat(65), image: "i".repeat(2049), email: "e".repeat(255) };
    expect(refusal(() => checkUserFieldLengths(long)).body?.field).toBe("email");
  });

  it("checks only strings, and only these fields", () => {
    expect(() =>
      checkUserFieldLengths({
        name: ["x".repeat(300)],
        image: null,
        username: 10 ** 80,
        bio: "b".repeat(10_000),
      }),
    ).not.toThrow();
    expect(() => checkUserFieldLengths({})).not.toThrow();
  });
});

describe("withUserFieldLimits", () => {
  const longName = { name: "n".repeat(257) };

  it.each(["create", "update"] as const)("checks on user %s without an application hook", async (kind) => {
    const hook = withUserFieldLimits(undefined).user?.[kind]?.before as unknown as Before;
    expect(await hook({ name: "ok" }, null)).toBeUndefined();
    expect((await refusalOf(() => hook(longName, null))).body?.code).toBe("FIELD_TOO_LONG");
  });

  it.each(["create", "update"] as const)(
    "runs the application's user %s hook after the check, with its data and context, and answers what it answers",
    async (kind) => {
      const calls: unknown[] = [];
      const hooks = {
        user: {
          [kind]: {
            before: async (data: unknown, ctx: unknown) => {
              calls.push([data, ctx]);
              return { data: { name: "changed" } };
            },
          },
        },
      } as Hooks;
      const hook = withUserFieldLimits(hooks).user?.[kind]?.before as unknown as Before;
      const ctx = { path: "/x" };
      expect(await hook({ name: "given" }, ctx)).toEqual({ data: { name: "changed" } });
      expect(calls).toEqual([[{ name: "given" }, ctx]]);
      await refusalOf(() => hook(longName, ctx));
      expect(calls).toHaveLength(1);
    },
  );

  it.each([
    ["user hooks of other kinds only", { user: { delete: { before: async () => true } } }],
    ["only after hooks", { user: { create: { after: async () => {} }, update: { after: async () => {} } } }],
    ["hooks of other models only", { session: { create: { before: async () => {} } } }],
  ])("checks and answers nothing when the application has %s", async (_, hooks) => {
    const wrapped = withUserFieldLimits(hooks as Hooks);
    for (const kind of ["create", "update"] as const) {
      const hook = wrapped.user?.[kind]?.before as unknown as Before;
      expect(await hook({ name: "ok" }, null)).toBeUndefined();
      await refusalOf(() => hook(longName, null));
    }
  });

  it("keeps every other hook: the user's after hooks, the other models' and other kinds", () => {
    const after = async () => {};
    const sessionCreate = async () => {};
    const userDelete = async () => false;
    const hooks = {
      user: { create: { after }, update: { after }, delete: { before: userDelete } },
      session: { create: { before: sessionCreate } },
    } as unknown as Hooks;
    const wrapped = withUserFieldLimits(hooks) as any;
    expect(wrapped.user.create.after).toBe(after);
    expect(wrapped.user.update.after).toBe(after);
    expect(wrapped.user.delete.before).toBe(userDelete);
    expect(wrapped.session.create.before).toBe(sessionCreate);
  });
});
