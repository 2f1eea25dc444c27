import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/backend/errors.ts";
import { newId, tableTag } from "../../src/backend/ids.ts";
import {
  describe as describeValidator,
  type Validator,
  v,
  validate,
} from "../../src/backend/values/index.ts";

/** The ValidationError `validate` throws, or null when the value passes. */
function failure(validator: Validator, value: unknown, path = "args"): ValidationError | null {
  try {
    validate(validator, value, path);
    return null;
  } catch (e) {
    if (e instanceof ValidationError) return e;
    throw e;
  }
}

const accepts = (validator: Validator, value: unknown) => expect(failure(validator, value)).toBeNull();
const rejects = (validator: Validator, value: unknown, path: string, expected: string) => {
  const e = failure(validator, value);
  expect(e, `expected ${JSON.stringify(value)} to be rejected`).toBeInstanceOf(ValidationError);
  expect(e!.code).toBe("INVALID_ARGUMENTS");
  expect(e!.status).toBe(400);
  expect(e!.path).toBe(path);
  expect(e!.expected).toBe(expected);
  expect(e!.data).toEqual({ path, expected });
  expect(e!.message).toContain(path);
};

describe("validators", () => {
  it("string", () => {
    accepts(v.string(), "");
    accepts(v.string(), "héllo");
    for (const bad of [1, true, null, [], {}]) rejects(v.string(), bad, "args", "string");
    rejects(v.string(), undefined, "args", "string");
  });

  it("number", () => {
    for (const ok of [0, -0, 1.5, -1e300, Number.MAX_SAFE_INTEGER]) accepts(v.number(), ok);
    for (const bad of ["1", NaN, null, true, [1]]) rejects(v.number(), bad, "args", "number");
  });

  it("boolean", () => {
    accepts(v.boolean(), true);
    accepts(v.boolean(), false);
    for (const bad of [0, 1, "true", null]) rejects(v.boolean(), bad, "args", "boolean");
  });

  it("null", () => {
    accepts(v.null(), null);
    for (const bad of [0, "", false, {}]) rejects(v.null(), bad, "args", "null");
    rejects(v.null(), undefined, "args", "null");
  });

  it("id(table) accepts only well-formed ids of that table", () => {
    const userId = newId(tableTag("users"));
    accepts(v.id("users"), userId);
    const messageId = newId(tableTag("messages"));
    for (const bad of [1, null, {}, "abcdefghijklmnopqrstuvwxyz2345", messageId, `${userId}x`, "../etc"]) {
      rejects(v.id("users"), bad, "args", "id<users>");
    }
  });

  it("optional", () => {
    const o = v.object({ a: v.optional(v.string()) });
    accepts(o, {});
    accepts(o, { a: "x" });
    accepts(o, { a: undefined });
    rejects(o, { a: null }, "args.a", "string");
    rejects(o, { a: 3 }, "args.a", "string");
    expect(v.optional(v.number()).isOptional).toBe(true);
    expect(v.number().isOptional).toBe(false);
  });

  it("literal", () => {
    accepts(v.literal("a"), "a");
    accepts(v.literal(3), 3);
    accepts(v.literal(false), false);
    rejects(v.literal("a"), "b", "args", '"a"');
    rejects(v.literal(3), "3", "args", "3");
    rejects(v.literal(false), 0, "args", "false");
  });

  it("union", () => {
    const u = v.union(v.string(), v.number(), v.null());
    for (const ok of ["x", 1, null]) accepts(u, ok);
    for (const bad of [true, [], {}]) rejects(u, bad, "args", "string | number | null");
    const tagged = v.union(
      v.object({ kind: v.literal("a"), a: v.string() }),
      v.object({ kind: v.literal("b"), b: v.number() }),
    );
    accepts(tagged, { kind: "a", a: "x" });
    accepts(tagged, { kind: "b", b: 1 });
    expect(failure(tagged, { kind: "a", b: 1 })).toBeInstanceOf(ValidationError);
  });

  it("array", () => {
    const a = v.array(v.number());
    accepts(a, []);
    accepts(a, [1, 2, 3]);
    rejects(a, [1, "2", 3], "args[1]", "number");
    rejects(a, { 0: 1, length: 1 }, "args", "array<number>");
    rejects(a, "123", "args", "array<number>");
    rejects(v.array(v.array(v.string())), [["a"], ["b", 3]], "args[1][1]", "string");
  });

  it("object", () => {
    const o = v.object({ name: v.string(), nested: v.object({ n: v.number() }) });
    accepts(o, { name: "a", nested: { n: 1 } });
    rejects(o, { name: "a" }, "args.nested", "object");
    rejects(o, { name: "a", nested: { n: "1" } }, "args.nested.n", "number");
    rejects(o, { name: 1, nested: { n: 1 } }, "args.name", "string");
    rejects(o, null, "args", "object");
    rejects(o, [], "args", "object");
    // Unknown fields are rejected, including names that exist on Object.prototype.
    rejects(o, { name: "a", nested: { n: 1 }, extra: 1 }, "args.extra", "no such field");
    rejects(o, { name: "a", nested: { n: 1 }, toString: "x" }, "args.toString", "no such field");
    rejects(
      o,
      JSON.parse('{"name":"a","nested":{"n":1},"__proto__":{"x":1}}'),
      "args.__proto__",
      "no such field",
    );
    rejects(o, { name: "a", nested: { n: 1 }, constructor: 1 }, "args.constructor", "no such field");
  });

  it("record", () => {
    const r = v.record(v.number());
    accepts(r, {});
    accepts(r, { a: 1, b: 2 });
    rejects(r, { a: 1, b: "2" }, "args.b", "number");
    rejects(r, [1], "args", "record<number>");
    rejects(r, null, "args", "record<number>");
  });

  it("any", () => {
    for (const ok of [1, "x", null, [], {}, { a: [1] }]) accepts(v.any(), ok);
    rejects(v.any(), undefined, "args", "any");
  });

  it("error message names the path, the expected type and what was received", () => {
    const e = failure(v.object({ user: v.object({ age: v.number() }) }), { user: { age: "ten" } });
    expect(e!.message).toBe("args.user.age must be number, got string");
    const missing = failure(v.object({ user: v.string() }), {});
    expect(missing!.message).toBe("args.user must be string, got nothing");
  });

  it("can report a schema violation instead of bad arguments", () => {
    try {
      validate(v.object({ a: v.string() }), { a: 1 }, "messages", "SCHEMA_VIOLATION");
      expect.unreachable();
    } catch (e) {
      expect((e as ValidationError).code).toBe("SCHEMA_VIOLATION");
      expect((e as ValidationError).path).toBe("messages.a");
    }
  });

  it("describes validators for messages", () => {
    expect(describeValidator(v.array(v.union(v.id("users"), v.literal("x"))))).toBe('array<id<users> | "x">');
    expect(describeValidator(v.record(v.boolean()))).toBe("record<boolean>");
  });
});
