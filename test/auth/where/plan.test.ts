/**
 * Which reads the where planner (`src/auth/where/plan.ts`) chooses. The fuzz test proves the
 * answers right whatever the plan; this one pins the plan itself, which decides how much is read
 * and whether a count may come from index entries alone (`exact`: a wrongly exact plan counts rows
 * that do not match) or a read may stop at offset + limit (`sorted`).
 */
import { describe, expect, test } from "vitest";
import { planWhere, type SortBy, type TableShape, type WhereClause } from "../../../src/auth/where/index.ts";

const shape: TableShape = {
  fields: { email: {}, name: {}, age: {}, role: {} },
  indexes: [
    { name: "email", fields: ["email"] },
    { name: "age", fields: ["age"] },
    { name: "nameAge", fields: ["name", "age"] },
  ],
};
const FULL_SCAN = {
  kind: "index",
  index: "by_creation_time",
  fields: ["_creationTime", "_id"],
  ranges: [{ eq: [] }],
};
const index = (name: string, ranges: unknown[]) => {
  const fields = shape.indexes.find((i) => i.name === name)?.fields ?? ["_creationTime"];
  return { kind: "index", index: name, fields, ranges };
};
const plan = (where: WhereClause[] | undefined, sortBy?: SortBy) => planWhere(shape, where, sortBy);
const asc = (field: string): SortBy => ({ field, direction: "asc" });

describe("no where", () => {
  test("a full scan in creation order, exact", () => {
    expect(plan(undefined)).toEqual({ sources: [FULL_SCAN], exact: true, sorted: true });
    expect(plan([])).toEqual({ sources: [FULL_SCAN], exact: true, sorted: true });
  });

  test("sortBy on an indexed field reads that index in order", () => {
    expect(plan([], asc("age"))).toEqual({
      sources: [index("age", [{ eq: [] }])],
      exact: true,
      sorted: true,
    });
    // The first field of a compound index gives its order too.
    expect(plan(undefined, asc("name")).sources).toEqual([index("nameAge", [{ eq: [] }])]);
  });

  test("sortBy on _creationTime is the full scan's own order; on an unindexed field it is not", () => {
    expect(plan([], asc("_creationTime"))).toEqual({ sources: [FULL_SCAN], exact: true, sorted: true });
    expect(plan([], asc("role"))).toEqual({ sources: [FULL_SCAN], exact: true, sorted: false });
  });
});

describe("_id", () => {
  test("eq and in become id lookups, duplicates and non-strings dropped", () => {
    expect(plan([{ field: "_id", value: "a" }])).toEqual({
      sources: [{ kind: "ids", ids: ["a"] }],
      exact: false,
      sorted: false,
    });
    expect(plan([{ field: "_id", operator: "in", value: ["a", "b", "a"] }]).sources).toEqual([
      { kind: "ids", ids: ["a", "b"] },
    ]);
    expect(plan([{ field: "_id", value: null }]).sources).toEqual([{ kind: "ids", ids: [] }]);
    expect(plan([{ field: "_id", operator: "in", value: [1, 2] }]).sources).toEqual([
      { kind: "ids", ids: [] },
    ]);
  });

  test("an id lookup wins over any index; other _id operators use none", () => {
    const where: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "_id", value: "a" },
    ];
    expect(plan(where).sources).toEqual([{ kind: "ids", ids: ["a"] }]);
    expect(plan([{ field: "_id", operator: "ne", value: "a" }])).toEqual({
      sources: [FULL_SCAN],
      exact: false,
      sorted: true,
    });
    expect(plan([{ field: "_id", value: "A", mode: "insensitive" }]).sources).toEqual([FULL_SCAN]);
  });
});

describe("equality on an index", () => {
  test("eq reads one exact range", () => {
    expect(plan([{ field: "email", value: "a@x" }])).toEqual({
      sources: [index("email", [{ eq: ["a@x"] }])],
      exact: true,
      sorted: true,
    });
    expect(plan([{ field: "email", operator: "eq", value: "a@x" }]).exact).toBe(true);
    expect(plan([{ field: "age", value: 3 }]).sources).toEqual([index("age", [{ eq: [3] }])]);
    expect(plan([{ field: "age", value: true }]).sources).toEqual([index("age", [{ eq: [true] }])]);
  });

  test("eq null (or a value left out, as skipValidation lets through) reads the missing and the null entries", () => {
    const missing = [{ field: "email", value: undefined }] as unknown as WhereClause[];
    expect(plan(missing).sources).toEqual([index("email", [{ eq: [undefined] }, { eq: [null] }])]);
    expect(plan([{ field: "email", value: null }])).toEqual({
      sources: [index("email", [{ eq: [undefined] }, { eq: [null] }])],
      exact: true,
      sorted: false,
    });
  });

  test("in reads one range per distinct value", () => {
    expect(plan([{ field: "age", operator: "in", value: [3, 4, 3] }])).toEqual({
      sources: [index("age", [{ eq: [3] }, { eq: [4] }])],
      exact: true,
      sorted: false,
    });
    // The number 1 and the string "1" are different keys.
    expect(plan([{ field: "email", operator: "in", value: ["1", 1] as string[] }]).sources).toEqual([
      index("email", [{ eq: ["1"] }, { eq: [1] }]),
    ]);
  });

  test("case-insensitive strings and other operators pin nothing", () => {
    for (const clause of [
      { field: "email", value: "A@x", mode: "insensitive" },
      { field: "email", operator: "in", value: ["a", "B"], mode: "insensitive" },
      { field: "email", operator: "ne", value: "a@x" },
      { field: "email", operator: "not_in", value: ["a@x"] },
      { field: "email", operator: "contains", value: "a" },
      { field: "email", operator: "starts_with", value: "a" },
      { field: "email", operator: "ends_with", value: "a" },
      { field: "role", value: "admin" },
    ] as WhereClause[]) {
      expect(plan([clause]), JSON.stringify(clause)).toEqual({
        sources: [FULL_SCAN],
        exact: false,
        sorted: true,
      });
    }
    // A number in an insensitive clause still pins its field.
    expect(plan([{ field: "age", value: 3, mode: "insensitive" }]).sources).toEqual([
      index("age", [{ eq: [3] }]),
    ]);
  });

  test("an array or object value pins nothing", () => {
    const where = [{ field: "email", value: [["a"]] as unknown as string }] as WhereClause[];
    expect(plan(where).sources).toEqual([FULL_SCAN]);
    const nested = [{ field: "email", operator: "in", value: [["a"]] }] as unknown as WhereClause[];
    expect(plan(nested).sources).toEqual([FULL_SCAN]);
  });
});

describe("ranges", () => {
  test("each comparison on a number is bounded to the numbers", () => {
    const bounds = (operator: WhereClause["operator"]) =>
      plan([{ field: "age", operator, value: 30 }]).sources[0];
    expect(bounds("gt")).toEqual(
      index("age", [
        { eq: [], lower: { value: 30, inclusive: false }, upper: { value: false, inclusive: false } },
      ]),
    );
    expect(bounds("gte")).toEqual(
      index("age", [
        { eq: [], lower: { value: 30, inclusive: true }, upper: { value: false, inclusive: false } },
      ]),
    );
    expect(bounds("lt")).toEqual(
      index("age", [
        {
          eq: [],
          lower: { value: Number.NEGATIVE_INFINITY, inclusive: true },
          upper: { value: 30, inclusive: false },
        },
      ]),
    );
    expect(bounds("lte")).toEqual(
      index("age", [
        {
          eq: [],
          lower: { value: Number.NEGATIVE_INFINITY, inclusive: true },
          upper: { value: 30, inclusive: true },
        },
      ]),
    );
    expect(plan([{ field: "age", operator: "gt", value: 30 }])).toMatchObject({ exact: true, sorted: true });
  });

  test("a comparison on a string is bounded to the strings", () => {
    expect(plan([{ field: "email", operator: "gte", value: "m" }]).sources[0]).toEqual(
      index("email", [
        { eq: [], lower: { value: "m", inclusive: true }, upper: { value: [], inclusive: false } },
      ]),
    );
    expect(plan([{ field: "email", operator: "lt", value: "m" }]).sources[0]).toEqual(
      index("email", [
        { eq: [], lower: { value: "", inclusive: true }, upper: { value: "m", inclusive: false } },
      ]),
    );
  });

  test("both bounds of one type make one range", () => {
    const where: WhereClause[] = [
      { field: "age", operator: "gte", value: 20 },
      { field: "age", operator: "lt", value: 30 },
    ];
    expect(plan(where)).toEqual({
      sources: [
        index("age", [
          { eq: [], lower: { value: 20, inclusive: true }, upper: { value: 30, inclusive: false } },
        ]),
      ],
      exact: true,
      sorted: true,
    });
    // The same bounds in the other order.
    expect(plan([where[1], where[0]]).sources).toEqual(plan(where).sources);
  });

  test("bounds of two types: the lower one reads, the filter applies the other", () => {
    const where: WhereClause[] = [
      { field: "age", operator: "gt", value: 20 },
      { field: "age", operator: "lt", value: "z" },
    ];
    expect(plan(where)).toEqual({
      sources: [
        index("age", [
          { eq: [], lower: { value: 20, inclusive: false }, upper: { value: false, inclusive: false } },
        ]),
      ],
      exact: false,
      sorted: true,
    });
  });

  test("NaN, booleans and null have no range", () => {
    for (const value of [Number.NaN, true, null]) {
      expect(plan([{ field: "age", operator: "gt", value }]).sources, String(value)).toEqual([FULL_SCAN]);
      expect(plan([{ field: "age", operator: "lt", value }]).sources, String(value)).toEqual([FULL_SCAN]);
    }
  });
});

describe("compound indexes and the choice between indexes", () => {
  test("equality on a prefix, then a range, an in or equality on the next field", () => {
    const name: WhereClause = { field: "name", value: "ann" };
    expect(plan([name, { field: "age", operator: "lte", value: 9 }]).sources).toEqual([
      index("nameAge", [
        {
          eq: ["ann"],
          lower: { value: Number.NEGATIVE_INFINITY, inclusive: true },
          upper: { value: 9, inclusive: true },
        },
      ]),
    ]);
    expect(plan([name, { field: "age", operator: "in", value: [1, 2] }]).sources).toEqual([
      index("nameAge", [{ eq: ["ann", 1] }, { eq: ["ann", 2] }]),
    ]);
    // Equality on both fields beats the single-field age index.
    expect(plan([{ field: "age", value: 1 }, name])).toEqual({
      sources: [index("nameAge", [{ eq: ["ann", 1] }])],
      exact: true,
      sorted: true,
    });
  });

  test("equality plus an in or a range on a compound index beats equality on one field", () => {
    const eq: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "name", value: "ann" },
    ];
    expect(plan([...eq, { field: "age", operator: "in", value: [1, 2] }]).sources).toEqual([
      index("nameAge", [{ eq: ["ann", 1] }, { eq: ["ann", 2] }]),
    ]);
    expect(plan([...eq, { field: "age", operator: "gt", value: 1 }]).sources).toEqual([
      index("nameAge", [
        { eq: ["ann"], lower: { value: 1, inclusive: false }, upper: { value: false, inclusive: false } },
      ]),
    ]);
    // An in (several exact reads) beats a range.
    const where: WhereClause[] = [
      { field: "email", operator: "in", value: ["a", "b"] },
      { field: "age", operator: "gt", value: 1 },
    ];
    expect(plan(where).sources).toEqual([index("email", [{ eq: ["a"] }, { eq: ["b"] }])]);
  });

  test("an in on the next field is preferred to a range on it", () => {
    const where: WhereClause[] = [
      { field: "name", value: "ann" },
      { field: "age", operator: "gt", value: 0 },
      { field: "age", operator: "in", value: [1, 2] },
    ];
    expect(plan(where)).toEqual({
      sources: [index("nameAge", [{ eq: ["ann", 1] }, { eq: ["ann", 2] }])],
      exact: false,
      sorted: false,
    });
  });

  test("equality beats a range; among equals the first index wins unless another gives sortBy's order", () => {
    const where: WhereClause[] = [
      { field: "age", operator: "gt", value: 1 },
      { field: "email", value: "a@x" },
    ];
    expect(plan(where)).toEqual({ sources: [index("email", [{ eq: ["a@x"] }])], exact: false, sorted: true });
    const two: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "name", value: "ann" },
    ];
    expect(plan(two).sources).toEqual([index("email", [{ eq: ["a@x"] }])]);
    // nameAge's next field is age: it reads in age order, and so wins the tie.
    expect(plan(two, asc("age"))).toEqual({
      sources: [index("nameAge", [{ eq: ["ann"] }])],
      exact: false,
      sorted: true,
    });
    expect(plan(two, { field: "age", direction: "desc" }).sources).toEqual([
      index("nameAge", [{ eq: ["ann"] }]),
    ]);
    // A plan whose next field is not the sort field is not sorted.
    expect(plan(two, asc("role")).sorted).toBe(false);
  });

  test("the index that yields sortBy's order does not win over more equality", () => {
    const where: WhereClause[] = [
      { field: "name", value: "ann" },
      { field: "age", value: 3 },
      { field: "email", value: "a@x" },
    ];
    // nameAge: 20; email + the sortBy bonus would be 11.
    expect(plan(where, asc("_creationTime")).sources).toEqual([index("nameAge", [{ eq: ["ann", 3] }])]);
  });

  test("a range of several reads is not sorted, so it gets no sortBy preference", () => {
    const where: WhereClause[] = [
      { field: "email", operator: "in", value: ["a", "b"] },
      { field: "age", operator: "in", value: [1, 2] },
    ];
    expect(plan(where, asc("age")).sources).toEqual([index("email", [{ eq: ["a"] }, { eq: ["b"] }])]);
  });

  test("_creationTime clauses use the creation-time index", () => {
    expect(plan([{ field: "_creationTime", operator: "gt", value: 5 }])).toEqual({
      sources: [
        {
          kind: "index",
          index: "by_creation_time",
          fields: ["_creationTime"],
          ranges: [
            { eq: [], lower: { value: 5, inclusive: false }, upper: { value: false, inclusive: false } },
          ],
        },
      ],
      exact: true,
      sorted: true,
    });
  });
});

describe("AND and OR", () => {
  test("an upper bound alone with an unindexed clause is not exact (a count would include non-matches)", () => {
    const where: WhereClause[] = [
      { field: "age", operator: "lt", value: 30 },
      { field: "role", value: "admin" },
    ];
    expect(plan(where).exact).toBe(false);
    expect(
      plan([where[0], { field: "role", value: "admin" }, { field: "age", operator: "gt", value: 1 }]).exact,
    ).toBe(false);
  });

  test("an extra clause no index answers makes the plan inexact", () => {
    const where: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "role", value: "admin" },
    ];
    expect(plan(where)).toEqual({ sources: [index("email", [{ eq: ["a@x"] }])], exact: false, sorted: true });
  });

  test("an OR whose branches all have an index reads each, merged and inexact", () => {
    const where: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "age", value: 3, connector: "OR" },
    ];
    expect(plan(where)).toEqual({
      sources: [index("email", [{ eq: ["a@x"] }]), index("age", [{ eq: [3] }])],
      exact: false,
      sorted: false,
    });
  });

  test("an OR with one unindexed branch reads everything", () => {
    const where: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "role", value: "admin", connector: "OR" },
    ];
    expect(plan(where)).toEqual({ sources: [FULL_SCAN], exact: false, sorted: true });
    expect(plan(where, asc("age"))).toEqual({
      sources: [index("age", [{ eq: [] }])],
      exact: false,
      sorted: true,
    });
    expect(plan(where, asc("_creationTime"))).toMatchObject({ sources: [FULL_SCAN], sorted: true });
    expect(plan(where, asc("role"))).toEqual({ sources: [FULL_SCAN], exact: false, sorted: false });
  });

  test("`(a OR b) AND c` with c unindexed reads the OR's branches", () => {
    const where: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "age", value: 3, connector: "OR" },
      { field: "role", value: "admin", connector: "AND" },
    ];
    expect(plan(where)).toEqual({
      sources: [index("email", [{ eq: ["a@x"] }]), index("age", [{ eq: [3] }])],
      exact: false,
      sorted: false,
    });
  });

  test("`(a OR b) AND c` with c indexed reads c alone, not exactly", () => {
    const where: WhereClause[] = [
      { field: "role", value: "x" },
      { field: "role", value: "y", connector: "OR" },
      { field: "email", value: "a@x" },
    ];
    expect(plan(where)).toEqual({ sources: [index("email", [{ eq: ["a@x"] }])], exact: false, sorted: true });
  });

  test("`a AND b OR c`: the AND is one branch of the OR", () => {
    const where: WhereClause[] = [
      { field: "email", value: "a@x" },
      { field: "role", value: "admin" },
      { field: "age", value: 3, connector: "OR" },
    ];
    expect(plan(where).sources).toEqual([index("email", [{ eq: ["a@x"] }]), index("age", [{ eq: [3] }])]);
    // A three-way AND is flat: all three leaves count towards exactness.
    const three: WhereClause[] = [
      { field: "name", value: "ann" },
      { field: "age", value: 3 },
      { field: "role", value: "x" },
    ];
    expect(plan(three).exact).toBe(false);
    expect(plan(three.slice(0, 2)).exact).toBe(true);
    // A three-way OR is flat too: three sources.
    const anyOf: WhereClause[] = [
      { field: "email", value: "a" },
      { field: "email", value: "b", connector: "OR" },
      { field: "age", value: 1, connector: "OR" },
    ];
    expect(plan(anyOf).sources).toHaveLength(3);
  });

  test("an OR of AND branches where neither leaf of the outer AND is indexed", () => {
    const where: WhereClause[] = [
      { field: "role", value: "x" },
      { field: "email", value: "a@x", connector: "OR" },
      { field: "role", value: "y" },
      { field: "role", value: "z", connector: "OR" },
    ];
    // ((role OR email) AND role) OR role: the last branch has no index.
    expect(plan(where).sources).toEqual([FULL_SCAN]);
  });
});
