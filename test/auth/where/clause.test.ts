/**
 * The up-front check of a where (`checkWhere`, `src/auth/where/clause.ts`): every malformed clause
 * is a typed `BAD_REQUEST` that says what is wrong, and every well-formed one passes, so bad input
 * never reaches the planner as a wrong answer.
 */
import { describe, expect, test } from "vitest";
import {
  checkWhere,
  isKnownField,
  type TableShape,
  WHERE_MODES,
  WHERE_OPERATORS,
  type WhereClause,
} from "../../../src/auth/where/index.ts";

const shape: TableShape = { fields: { name: {}, age: {} }, indexes: [] };

function refusal(where: unknown): unknown {
  try {
    checkWhere("user", shape, where as WhereClause[]);
  } catch (error) {
    return error;
  }
  return "accepted";
}

const refused = (message: string) => ({ code: "BAD_REQUEST", message });

describe("checkWhere accepts", () => {
  test("no where and an empty one", () => {
    expect(refusal(undefined)).toBe("accepted");
    expect(refusal([])).toBe("accepted");
  });

  test("every operator, connector and mode Better Auth sends, on declared and system fields", () => {
    for (const operator of WHERE_OPERATORS) {
      const value = operator === "in" || operator === "not_in" ? ["x"] : "x";
      expect(refusal([{ field: "name", operator, value }]), operator).toBe("accepted");
    }
    for (const mode of WHERE_MODES)
      expect(refusal([{ field: "name", value: "x", mode }]), mode).toBe("accepted");
    const where = [
      { field: "_id", value: "a" },
      { field: "_creationTime", operator: "gt", value: 1, connector: "AND" },
      { field: "age", value: 3, connector: "OR" },
      { field: "name", value: "x", connector: undefined, mode: undefined },
    ];
    expect(refusal(where)).toBe("accepted");
  });

  test("the operator lists hold exactly Better Auth's operators and modes", () => {
    expect([...WHERE_OPERATORS].sort()).toEqual(
      ["contains", "ends_with", "eq", "gt", "gte", "in", "lt", "lte", "ne", "not_in", "starts_with"].sort(),
    );
    expect([...WHERE_MODES].sort()).toEqual(["insensitive", "sensitive"]);
  });
});

describe("checkWhere refuses, with a message naming the problem", () => {
  test("a clause without a string field", () => {
    const message = "where: every clause needs a field";
    expect(refusal([{ value: "x" }])).toMatchObject(refused(message));
    expect(refusal([{ field: 1, value: "x" }])).toMatchObject(refused(message));
    expect(refusal([null])).toMatchObject(refused(message));
    expect(refusal([{ field: "name", value: "x" }, { value: "x" }])).toMatchObject(refused(message));
  });

  test("an unknown operator", () => {
    expect(refusal([{ field: "name", operator: "like", value: "x" }])).toMatchObject(
      refused('where: unknown operator "like"'),
    );
    expect(refusal([{ field: "name", operator: "", value: "x" }])).toMatchObject(
      refused('where: unknown operator ""'),
    );
  });

  test("in / not_in without an array value", () => {
    for (const operator of ["in", "not_in"]) {
      expect(refusal([{ field: "name", operator, value: "x" }]), operator).toMatchObject(
        refused(`where: "${operator}" on "name" needs an array value`),
      );
    }
  });

  test("an unknown connector", () => {
    for (const connector of ["XOR", "or", null, ""]) {
      expect(refusal([{ field: "name", value: "x", connector }]), String(connector)).toMatchObject(
        refused(`where: unknown connector "${String(connector)}"`),
      );
    }
  });

  test("an unknown mode", () => {
    for (const mode of ["loose", "Insensitive", null]) {
      expect(refusal([{ field: "name", value: "x", mode }]), String(mode)).toMatchObject(
        refused(`where: unknown mode "${String(mode)}"`),
      );
    }
  });

  test("a field the table does not have, including inherited object properties", () => {
    for (const field of ["nope", "constructor", "toString", "__proto__", "id", ""]) {
      expect(refusal([{ field, value: "x" }]), field).toMatchObject(
        refused(`where: "user" has no field "${field}"`),
      );
    }
  });
});

test("isKnownField: declared fields and the two system fields, nothing else", () => {
  expect(isKnownField(shape, "name")).toBe(true);
  expect(isKnownField(shape, "_id")).toBe(true);
  expect(isKnownField(shape, "_creationTime")).toBe(true);
  expect(isKnownField(shape, "_other")).toBe(false);
  expect(isKnownField(shape, "hasOwnProperty")).toBe(false);
});
