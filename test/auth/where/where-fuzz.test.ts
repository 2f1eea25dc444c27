/**
 * Differential check of the adapter's where planner (src/auth/where/): for many random
 * where/sortBy/limit/offset combinations on a real SQLite table, `findDocs` and `countDocs` must
 * return exactly what filtering every document with `matchesWhere` returns. The values include
 * astral (surrogate pair) and U+E000+ strings, whose UTF-16 order differs from code point order.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import type { StoredDoc } from "../../../src/auth/data/types.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { matchesWhere, type WhereClause } from "../../../src/auth/where/index.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import { compareValues } from "../../../src/backend/server.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: {
      fields: { username: v.optional(v.string()), age: v.optional(v.number()) },
      indexes: { username: ["username"], age: ["age"], nameAge: ["name", "age"] },
    },
  }),
});

let seed = 12345;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

// "\uE000"/"\uFFFF" sort after "😀"/"𝄞" by UTF-16 code unit (the index order) but before them by code point.
const names = ["ann", "bob", "cid", "dee", "Eve", "é", "", "\uE000", "😀", "\uFFFF", "𝄞x", "a😀", "a\uE000"];
const usernames = ["a1", "b1", "c1", "zz", "A1", "\uE000", "😀", "\uF8FF1", "𝄞"];
const ages = [-1, 0, 25, 25.5, 31, 40];

let backend: BackendRuntime;
let all: StoredDoc[] = [];
const internal = { allowInternal: true };

beforeAll(async () => {
  backend = new BackendRuntime({
    schema,
    modules: { auth: createApi(schema) },
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
  for (let i = 0; i < 40; i++) {
    const data: Record<string, unknown> = {
      name: pick(names),
      email: `u${i}@example.com`,
      emailVerified: rand() < 0.5,
      createdAt: 1000 + Math.floor(rand() * 5),
      updatedAt: 1000,
    };
    if (rand() < 0.7) data.username = pick(usernames);
    if (rand() < 0.7) data.age = pick(ages);
    if (rand() < 0.3) data.role = pick(["admin", "user"]);
    await backend.runMutation("auth:create", { model: "user", data }, internal);
  }
  all = (await backend.runQuery("auth:findMany", { model: "user", limit: 1000 }, internal))
    .value as StoredDoc[];
});
afterAll(() => backend.close());

const fields = [
  "_id",
  "name",
  "username",
  "age",
  "emailVerified",
  "role",
  "createdAt",
  "_creationTime",
  "email",
] as const;
const ops = [
  "eq",
  "ne",
  "lt",
  "lte",
  "gt",
  "gte",
  "in",
  "not_in",
  "contains",
  "starts_with",
  "ends_with",
] as const;

function valueFor(field: string): unknown {
  if (rand() < 0.1) return null;
  switch (field) {
    case "_id":
      return rand() < 0.8 ? pick(all)._id : "nope";
    case "name":
      return pick(names);
    case "username":
      return pick(usernames);
    case "age":
      return rand() < 0.1 ? "25" : pick(ages);
    case "emailVerified":
      return rand() < 0.5;
    case "role":
      return pick(["admin", "user", "x"]);
    case "createdAt":
      return 1000 + Math.floor(rand() * 6);
    case "_creationTime":
      return pick(all)._creationTime;
    default:
      return pick(all).email;
  }
}

function randomClause(): WhereClause {
  const field = pick(fields);
  const operator = pick(ops);
  let value: unknown;
  if (operator === "in" || operator === "not_in") {
    const n = Math.floor(rand() * 4);
    const list: unknown[] = [];
    for (let i = 0; i < n; i++) list.push(valueFor(field));
    const clean = list.filter((x) => x !== null);
    value = clean.every((x) => typeof x === "string") ? clean : clean.filter((x) => typeof x === "number");
  } else {
    value = valueFor(field);
  }
  return { field, operator, value: value as WhereClause["value"], connector: rand() < 0.35 ? "OR" : "AND" };
}

function sortDocs(docs: StoredDoc[], sortBy: { field: string; direction: "asc" | "desc" }) {
  const sign = sortBy.direction === "desc" ? -1 : 1;
  return [...docs].sort(
    (a, b) =>
      sign *
      (compareValues(a[sortBy.field], b[sortBy.field]) ||
        a._creationTime - b._creationTime ||
        compareValues(a._id, b._id)),
  );
}

describe("where planner vs brute force", () => {
  test("600 random queries", async () => {
    const failures: unknown[] = [];
    for (let i = 0; i < 600; i++) {
      const where = Array.from({ length: 1 + Math.floor(rand() * 4) }, randomClause);
      const sortBy =
        rand() < 0.5
          ? {
              field: pick(["name", "age", "username", "createdAt", "_creationTime"]),
              direction: pick(["asc", "desc"] as const),
            }
          : undefined;
      const limit = rand() < 0.5 ? 1 + Math.floor(rand() * 10) : 1000;
      const offset = rand() < 0.3 ? Math.floor(rand() * 5) : undefined;
      const matching = all.filter((d) => matchesWhere(d, where));
      const got = (
        await backend.runQuery("auth:findMany", { model: "user", where, sortBy, limit, offset }, internal)
      ).value as StoredDoc[];
      const count = (await backend.runQuery("auth:count", { model: "user", where }, internal))
        .value as number;
      const start = offset ?? 0;
      if (count !== matching.length)
        failures.push({ kind: "count", where, count, expected: matching.length });
      if (sortBy) {
        // Ties on the sort field may come in any order (a compound index orders them by its next field).
        const keyOf = (d: StoredDoc) => JSON.stringify(d[sortBy.field] ?? null);
        const expected = sortDocs(matching, sortBy)
          .slice(start, start + limit)
          .map(keyOf);
        const ids = new Set(matching.map((d) => d._id));
        if (
          JSON.stringify(got.map(keyOf)) !== JSON.stringify(expected) ||
          !got.every((d) => ids.has(d._id)) ||
          new Set(got.map((d) => d._id)).size !== got.length
        ) {
          failures.push({ kind: "sorted", where, sortBy, limit, offset, got: got.map(keyOf), expected });
        }
      } else {
        const ids = new Set(matching.map((d) => d._id));
        const size = Math.max(0, Math.min(limit, matching.length - start));
        if (
          got.length !== size ||
          !got.every((d) => ids.has(d._id)) ||
          new Set(got.map((d) => d._id)).size !== got.length
        ) {
          failures.push({ kind: "window", where, limit, offset, got: got.length, size });
        }
      }
    }
    if (process.env.DUMP)
      (await import("node:fs")).writeFileSync(process.env.DUMP, JSON.stringify(failures, null, 1));
    expect(failures.slice(0, 3)).toEqual([]);
  });
});
