/**
 * The in-memory where semantics (`src/auth/where/match.ts`) clause by clause, against answers
 * written down here rather than another implementation: every operator at its boundary, `null` as
 * "no value", comparisons only between values of one type, case folding only where it applies, and
 * the left fold of the connectors. A wrong answer here hands a caller someone else's rows.
 */
import { describe, expect, test } from "vitest";
import { matchesClause, matchesWhere, type WhereClause } from "../../../src/auth/where/index.ts";

const doc = { name: "Bob", age: 30, verified: true, tags: ["ab"], role: null as string | null };
const match = (clause: WhereClause, subject: Record<string, unknown> = doc) => matchesClause(subject, clause);

describe("eq and ne", () => {
  test("eq is the default operator and compares strictly", () => {
    expect(match({ field: "name", value: "Bob" })).toBe(true);
    expect(match({ field: "name", value: "bob" })).toBe(false);
    expect(match({ field: "age", value: "30" })).toBe(false);
    expect(match({ field: "age", operator: "eq", value: 30 })).toBe(true);
  });

  test("eq null matches a null or missing field and nothing else; ne null is its negation", () => {
    expect(match({ field: "role", value: null })).toBe(true);
    expect(match({ field: "missing", value: null })).toBe(true);
    expect(match({ field: "name", value: null })).toBe(false);
    expect(match({ field: "age", value: null }, { age: 0 })).toBe(false);
    expect(match({ field: "name", value: null }, { name: "" })).toBe(false);
    expect(match({ field: "name", operator: "ne", value: null })).toBe(true);
    expect(match({ field: "role", operator: "ne", value: null })).toBe(false);
    expect(match({ field: "missing", operator: "ne", value: null })).toBe(false);
  });

  test("a null stored value equals no concrete value", () => {
    expect(match({ field: "role", value: "admin" })).toBe(false);
    expect(match({ field: "role", operator: "ne", value: "admin" })).toBe(true);
    expect(match({ field: "name", operator: "ne", value: "Bob" })).toBe(false);
  });
});

describe("ordering comparisons", () => {
  test("each operator at, below and above the stored number", () => {
    const at = (operator: WhereClause["operator"], value: number) => match({ field: "age", operator, value });
    expect([at("lt", 29), at("lt", 30), at("lt", 31)]).toEqual([false, false, true]);
    expect([at("lte", 29), at("lte", 30), at("lte", 31)]).toEqual([false, true, true]);
    expect([at("gt", 29), at("gt", 30), at("gt", 31)]).toEqual([true, false, false]);
    expect([at("gte", 29), at("gte", 30), at("gte", 31)]).toEqual([true, true, false]);
  });

  test("strings compare by UTF-16 code unit, booleans false before true", () => {
    // U+E000 is above the high surrogate of U+1F600: greater by code unit, smaller by code point.
    expect(match({ field: "name", operator: "gt", value: "😀" }, { name: "\uE000" })).toBe(true);
    expect(match({ field: "name", operator: "lt", value: "😀" }, { name: "\uE000" })).toBe(false);
    expect(match({ field: "name", operator: "lt", value: "a" })).toBe(true);
    expect(match({ field: "verified", operator: "gt", value: false })).toBe(true);
    expect(match({ field: "verified", operator: "lt", value: true })).toBe(false);
    expect(match({ field: "verified", operator: "lte", value: true })).toBe(true);
  });

  test("values of different types, null and missing fields never compare", () => {
    for (const operator of ["lt", "lte", "gt", "gte"] as const) {
      expect(match({ field: "age", operator, value: "30" }), operator).toBe(false);
      expect(match({ field: "name", operator, value: 1 }), operator).toBe(false);
      expect(match({ field: "missing", operator, value: 1 }), operator).toBe(false);
      expect(match({ field: "role", operator, value: "a" }), operator).toBe(false);
      expect(match({ field: "age", operator, value: null }), operator).toBe(false);
      expect(match({ field: "role", operator, value: null }), operator).toBe(false);
    }
  });

  test("arrays and objects are not ordered, even against their own type", () => {
    for (const operator of ["lt", "lte", "gt", "gte"] as const) {
      const list = { field: "tags", operator, value: ["ab"] as string[] };
      expect(match(list), operator).toBe(false);
      expect(match({ ...list, value: ["b"] }), operator).toBe(false);
      expect(match({ ...list, value: ["a"] }), operator).toBe(false);
      const object = { field: "o", operator, value: { k: 1 } as unknown as number };
      expect(match(object, { o: { k: 1 } }), operator).toBe(false);
    }
  });

  test("ordering ignores an insensitive mode (Better Auth's memory adapter does the same)", () => {
    expect(match({ field: "name", operator: "lt", value: "a", mode: "insensitive" })).toBe(true);
    expect(match({ field: "name", operator: "gte", value: "b", mode: "insensitive" })).toBe(false);
    expect(match({ field: "name", operator: "lte", value: "bob", mode: "insensitive" })).toBe(true);
    expect(match({ field: "name", operator: "gt", value: "bob", mode: "insensitive" })).toBe(false);
    // Each operator where folding would change the answer.
    const lower = { name: "b" };
    expect(match({ field: "name", operator: "lt", value: "B", mode: "insensitive" }, { name: "a" })).toBe(
      false,
    );
    expect(match({ field: "name", operator: "lte", value: "B", mode: "insensitive" }, lower)).toBe(false);
    expect(match({ field: "name", operator: "gt", value: "B", mode: "insensitive" }, lower)).toBe(true);
    expect(match({ field: "name", operator: "gte", value: "c", mode: "insensitive" }, { name: "C" })).toBe(
      false,
    );
  });
});

describe("in and not_in", () => {
  test("membership with strict equality; null in the list stands for a missing value", () => {
    expect(match({ field: "name", operator: "in", value: ["Ann", "Bob"] })).toBe(true);
    expect(match({ field: "name", operator: "in", value: ["Ann", "bob"] })).toBe(false);
    expect(match({ field: "name", operator: "in", value: [] })).toBe(false);
    expect(match({ field: "age", operator: "in", value: ["30"] })).toBe(false);
    expect(match({ field: "name", operator: "not_in", value: ["Ann", "Bob"] })).toBe(false);
    expect(match({ field: "name", operator: "not_in", value: ["Ann"] })).toBe(true);
    expect(match({ field: "name", operator: "not_in", value: [] })).toBe(true);
    const withNull = [null, "x"] as unknown as string[];
    expect(match({ field: "missing", operator: "in", value: withNull })).toBe(true);
    expect(match({ field: "missing", operator: "not_in", value: withNull })).toBe(false);
  });

  test("a value that is not an array is a typed error naming the operator and field", () => {
    for (const operator of ["in", "not_in"] as const) {
      let error: unknown;
      try {
        match({ field: "name", operator, value: "Bob" });
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({
        code: "BAD_REQUEST",
        message: `where: "${operator}" on "name" needs an array value`,
      });
    }
  });
});

describe("string operators", () => {
  test("contains, starts_with and ends_with, case-sensitive by default", () => {
    const subject = { name: "Grace Hopper" };
    expect(match({ field: "name", operator: "contains", value: "ce H" }, subject)).toBe(true);
    expect(match({ field: "name", operator: "contains", value: "HOP" }, subject)).toBe(false);
    expect(match({ field: "name", operator: "starts_with", value: "Grace" }, subject)).toBe(true);
    expect(match({ field: "name", operator: "starts_with", value: "Hopper" }, subject)).toBe(false);
    expect(match({ field: "name", operator: "ends_with", value: "Hopper" }, subject)).toBe(true);
    expect(match({ field: "name", operator: "ends_with", value: "Grace" }, subject)).toBe(false);
  });

  test("only a string field and a string value: arrays, numbers and null never match", () => {
    for (const operator of ["contains", "starts_with", "ends_with"] as const) {
      // An array has includes/startsWith-like semantics of its own; a number would be coerced.
      expect(match({ field: "tags", operator, value: "ab" }), operator).toBe(false);
      expect(match({ field: "name", operator, value: 1 as unknown as string }, { name: "1" }), operator).toBe(
        false,
      );
      expect(match({ field: "missing", operator, value: "" }), operator).toBe(false);
      expect(match({ field: "age", operator, value: "3" }, { age: 3 }), operator).toBe(false);
    }
  });

  test("an insensitive clause folds both sides, including list values", () => {
    const insensitive = (clause: WhereClause) => match({ ...clause, mode: "insensitive" });
    expect(insensitive({ field: "name", value: "BOB" })).toBe(true);
    expect(insensitive({ field: "name", operator: "ne", value: "bOB" })).toBe(false);
    expect(insensitive({ field: "name", operator: "in", value: ["x", "BOB"] })).toBe(true);
    expect(insensitive({ field: "name", operator: "not_in", value: ["BOB"] })).toBe(false);
    expect(insensitive({ field: "name", operator: "contains", value: "O" })).toBe(true);
    expect(insensitive({ field: "name", operator: "starts_with", value: "bo" })).toBe(true);
    expect(insensitive({ field: "name", operator: "ends_with", value: "OB" })).toBe(true);
    // Non-strings are compared as they are.
    expect(insensitive({ field: "age", value: 30 })).toBe(true);
    expect(insensitive({ field: "age", operator: "in", value: [30] })).toBe(true);
    expect(match({ field: "name", value: "BOB", mode: "sensitive" })).toBe(false);
    // Folding is to lower case, as Better Auth's memory adapter does: upper-casing would make
    // "ß" equal "SS" and the dotless "ı" equal "i".
    expect(match({ field: "name", value: "ss", mode: "insensitive" }, { name: "ß" })).toBe(false);
    expect(match({ field: "name", value: "i", mode: "insensitive" }, { name: "ı" })).toBe(false);
    expect(
      match({ field: "name", operator: "contains", value: "SS", mode: "insensitive" }, { name: "Straße" }),
    ).toBe(false);
  });

  test("a stored value in another case does not match the sensitive default", () => {
    expect(match({ field: "name", value: "bob" }, { name: "BOB" })).toBe(false);
    expect(match({ field: "name", value: "bob", mode: "insensitive" }, { name: "BOB" })).toBe(true);
  });
});

test("an unknown operator is a typed error", () => {
  expect(() => match({ field: "name", operator: "like" as never, value: "B%" })).toThrow(
    expect.objectContaining({ code: "BAD_REQUEST", message: 'Unknown where operator "like"' }),
  );
});

describe("matchesWhere", () => {
  const yes: WhereClause = { field: "name", value: "Bob" };
  const no: WhereClause = { field: "name", value: "Ann" };

  test("no where, or an empty one, matches every document", () => {
    expect(matchesWhere(doc, undefined)).toBe(true);
    expect(matchesWhere(doc, [])).toBe(true);
  });

  test("one clause decides alone", () => {
    expect(matchesWhere(doc, [yes])).toBe(true);
    expect(matchesWhere(doc, [no])).toBe(false);
  });

  test("AND (the default connector) needs both; OR needs either", () => {
    expect(matchesWhere(doc, [yes, yes])).toBe(true);
    expect(matchesWhere(doc, [yes, no])).toBe(false);
    expect(matchesWhere(doc, [no, yes])).toBe(false);
    expect(matchesWhere(doc, [yes, { ...no, connector: "AND" }])).toBe(false);
    expect(matchesWhere(doc, [no, { ...yes, connector: "OR" }])).toBe(true);
    expect(matchesWhere(doc, [yes, { ...no, connector: "OR" }])).toBe(true);
    expect(matchesWhere(doc, [no, { ...no, connector: "OR" }])).toBe(false);
  });

  test("connectors fold left: `a, OR b, AND c` is `(a || b) && c`", () => {
    expect(matchesWhere(doc, [yes, { ...no, connector: "OR" }, no])).toBe(false);
    expect(matchesWhere(doc, [no, { ...yes, connector: "OR" }, yes])).toBe(true);
    // `a, AND b, OR c` is `(a && b) || c`.
    expect(matchesWhere(doc, [yes, no, { ...yes, connector: "OR" }])).toBe(true);
    expect(matchesWhere(doc, [no, yes, { ...no, connector: "OR" }])).toBe(false);
  });
});
