/**
 * Argument validation of the auth data functions (`src/auth/data/validators.ts`, put together per
 * operation in `src/auth/data/operations.ts` and registered by `createApi`): the strict validators refuse malformed where clauses, sortBy and windows; `checkModelArgs` checks create data
 * and update values against exactly the named model, with errors naming the model and the field;
 * `skipValidation` leaves only the model name typed.
 */
import { describe, expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import { OPERATION_NAMES } from "../../../src/auth/data/operations.ts";
import { checkModelArgs } from "../../../src/auth/data/validators.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { defineSchema, defineTable } from "../../../src/backend/schema.ts";
import { validate } from "../../../src/backend/values/validate.ts";
import { type PropertyValidators, v } from "../../../src/backend/values/validators.ts";

const schema = defineSchema({
  ...defineAuthTables({ user: { fields: { age: v.optional(v.number()) } } }),
  stats: defineTable({ users: v.number() }),
});
const config = { schema };
const user = { name: "ann", email: "ann@x", emailVerified: false, createdAt: 1, updatedAt: 1 };

function refusal(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return "accepted";
}

/** Whether `args` pass the validators of one function, as the registry checks them. */
const check = (validators: PropertyValidators | undefined, args: unknown) =>
  refusal(() => validate(v.object(validators!), args, "args"));

/** The `args` validators of each registered data function. */
const argsOf = (skipValidation: boolean) => {
  const api = createApi(schema, { skipValidation });
  return Object.fromEntries(OPERATION_NAMES.map((name) => [name, api[name].args]));
};

describe("checkModelArgs", () => {
  test("valid data and updates pass; optional fields take null (Better Auth's no value)", () => {
    expect(refusal(() => checkModelArgs(config, { model: "user", data: user }))).toBe("accepted");
    const data = { ...user, image: null, age: null };
    expect(refusal(() => checkModelArgs(config, { model: "user", data }))).toBe("accepted");
    expect(refusal(() => checkModelArgs(config, { model: "user", update: { name: null, age: 3 } }))).toBe(
      "accepted",
    );
    expect(refusal(() => checkModelArgs(config, { model: "user" }))).toBe("accepted");
  });

  test("an unknown or non-auth model is refused as the model argument", () => {
    for (const model of ["nope", "stats"]) {
      expect(
        refusal(() => checkModelArgs(config, { model, data: user })),
        model,
      ).toMatchObject({
        code: "INVALID_ARGUMENTS",
        path: "args.model",
        expected: "an auth model of the schema",
        message: expect.stringContaining(`Unknown auth model "${model}"`),
      });
    }
  });

  test("bad create data names the model and the field", () => {
    const wrongType = refusal(() =>
      checkModelArgs(config, { model: "user", data: { ...user, emailVerified: "yes" } }),
    );
    expect(wrongType).toMatchObject({ code: "INVALID_ARGUMENTS", path: "args.data.emailVerified" });
    expect((wrongType as Error).message).toMatch(/^Auth model "user": /);
    // A required field cannot be null on create, nor missing; an unknown field is refused.
    expect(
      refusal(() => checkModelArgs(config, { model: "user", data: { ...user, name: null } })),
    ).toMatchObject({
      path: "args.data.name",
    });
    const { name: _, ...noName } = user;
    expect(refusal(() => checkModelArgs(config, { model: "user", data: noName }))).toMatchObject({
      path: "args.data.name",
    });
    expect(
      refusal(() => checkModelArgs(config, { model: "user", data: { ...user, admin: true } })),
    ).toMatchObject({
      code: "INVALID_ARGUMENTS",
    });
    // A session's data is not a user.
    const session = { token: "t", userId: "u", expiresAt: 1, createdAt: 1, updatedAt: 1 };
    expect(refusal(() => checkModelArgs(config, { model: "user", data: session }))).toMatchObject({
      code: "INVALID_ARGUMENTS",
    });
  });

  test("bad update values name the model and the field", () => {
    const bad = refusal(() => checkModelArgs(config, { model: "user", update: { age: "3" } }));
    expect(bad).toMatchObject({ code: "INVALID_ARGUMENTS", path: "args.update.age" });
    expect((bad as Error).message).toMatch(/^Auth model "user": /);
    expect(refusal(() => checkModelArgs(config, { model: "user", update: { admin: true } }))).toMatchObject({
      code: "INVALID_ARGUMENTS",
    });
    expect(
      refusal(() => checkModelArgs(config, { model: "user", data: user, update: { age: "3" } })),
    ).toMatchObject({ path: "args.update.age" });
  });
});

describe("strict argument validators", () => {
  const strict = argsOf(false);
  const where = [{ field: "email", value: "a@x", operator: "eq", connector: "AND", mode: "insensitive" }];

  test("well-formed arguments of every function pass", () => {
    expect(check(strict.create, { model: "user", data: user, select: ["name"] })).toBe("accepted");
    expect(check(strict.findOne, { model: "user", where })).toBe("accepted");
    const many = { model: "user", where, sortBy: { field: "name", direction: "desc" }, limit: 1, offset: 0 };
    expect(check(strict.findMany, many)).toBe("accepted");
    expect(check(strict.findMany, { model: "user" })).toBe("accepted");
    const either = [where[0], { field: "name", value: "b", connector: "OR", mode: "sensitive" }];
    expect(
      check(strict.findMany, { model: "user", where: either, sortBy: { field: "name", direction: "asc" } }),
    ).toBe("accepted");
    expect(check(strict.count, { model: "user" })).toBe("accepted");
    for (const name of ["updateOne", "updateMany"]) {
      expect(check(strict[name], { model: "user", where, update: { name: "b" } }), name).toBe("accepted");
      expect(check(strict[name], { model: "user", where }), name).toMatchObject({ path: "args.update" });
    }
    for (const name of ["deleteOne", "deleteMany"]) {
      expect(check(strict[name], { model: "user", where }), name).toBe("accepted");
      expect(check(strict[name], { model: "user" }), name).toMatchObject({ path: "args.where" });
    }
    for (const value of ["s", 1, true, null, ["a"], [1]]) {
      expect(
        check(strict.count, { model: "user", where: [{ field: "f", value }] }),
        JSON.stringify(value),
      ).toBe("accepted");
    }
  });

  test("malformed where clauses, sortBy and windows are refused", () => {
    const bad = (clause: Record<string, unknown>) =>
      check(strict.count, { model: "user", where: [{ field: "email", value: "a", ...clause }] });
    expect(bad({ operator: "like" })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(bad({ connector: "XOR" })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(bad({ mode: "loose" })).toMatchObject({ code: "INVALID_ARGUMENTS", path: "args.where[0].mode" });
    expect(bad({ field: 1 })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(bad({ value: { $ne: 1 } })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(bad({ value: [true] })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(check(strict.findOne, { model: "user" })).toMatchObject({ path: "args.where" });
    const many = (extra: Record<string, unknown>) => check(strict.findMany, { model: "user", ...extra });
    expect(many({ sortBy: { field: "name", direction: "up" } })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(many({ sortBy: { direction: "asc" } })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(many({ limit: "1" })).toMatchObject({ path: "args.limit" });
    expect(many({ offset: "1" })).toMatchObject({ path: "args.offset" });
    expect(many({ select: [1] })).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(check(strict.create, { model: 1, data: user })).toMatchObject({ path: "args.model" });
    expect(check(strict.create, { model: "user", data: "x" })).toMatchObject({ path: "args.data" });
  });
});

test("skipValidation: only the model name is typed", () => {
  const loose = argsOf(true);
  const anything = {
    model: "user",
    data: 1,
    where: "x",
    update: [],
    select: 2,
    sortBy: 3,
    limit: "4",
    offset: {},
  };
  expect(Object.keys(loose)).toEqual([
    "create",
    "findOne",
    "findMany",
    "count",
    "updateOne",
    "updateMany",
    "deleteOne",
    "deleteMany",
    "consumeOne",
    "incrementOne",
  ]);
  for (const fn of OPERATION_NAMES) {
    expect(check(loose[fn], anything), fn).toBe("accepted");
    expect(check(loose[fn], { model: "user" }), fn).toBe("accepted");
    expect(check(loose[fn], { ...anything, model: 1 }), fn).toMatchObject({ path: "args.model" });
  }
});
