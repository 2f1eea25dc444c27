/**
 * Running a where plan (`src/auth/where/execute.ts`) on a real SQLite table: window checks, sort
 * order and its ties when sorting in memory, merging several sources by id, and how many rows a
 * read or a count touches (an engine spy around the real engine counts them).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import type { StoredDoc } from "../../../src/auth/data/types.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import type { WhereClause } from "../../../src/auth/where/index.ts";
import { functionsFor } from "../../../src/backend/functions/define.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import type { ReadTransaction } from "../../../src/backend/storage/engine.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: { fields: { age: v.optional(v.number()) }, indexes: { age: ["age"] } },
  }),
});

const calls = { scannedRows: 0, counts: 0, gets: 0 };
let backend: BackendRuntime;
const ids: Record<string, string> = {};
const internal = { allowInternal: true };
// Created in this order; ann and bob share an age.
const PEOPLE: [string, number | undefined][] = [
  ["ann", 30],
  ["bob", 30],
  ["cid", 20],
  ["dee", 40],
  ["eve", undefined],
];

// Seeded with a plain insert, not `auth:create`: its unique check would run the where code before
// any test, and Stryker then treats every mutant there as static (all tests per mutant, and in
// 9.6.1 such mutants were reported as survivors though the tests kill them).
const seed = functionsFor(schema).internalMutation({
  args: {},
  handler: async (ctx) => {
    const out: Record<string, string> = {};
    for (const [name, age] of PEOPLE) {
      const data = { name, email: `${name}@x`, emailVerified: false, createdAt: 1, updatedAt: 1 };
      out[name] = await ctx.db.insert("user", age === undefined ? data : { ...data, age });
    }
    return out;
  },
});

beforeAll(async () => {
  const engine = new SqliteEngine({ filename: tempDatabaseFile() });
  backend = new BackendRuntime({
    schema,
    modules: { auth: createApi(schema), seed: { users: seed } },
    engine,
  });
  await backend.start();
  Object.assign(ids, (await backend.runMutation("seed:users", {}, internal)).value);
  // A spy around the real engine's reads, not a replacement.
  const read = engine.read.bind(engine);
  engine.read = (fn) =>
    read((tx: ReadTransaction) =>
      fn({
        get: (table, id) => {
          calls.gets++;
          return tx.get(table, id);
        },
        scan: async (req) => {
          const rows = await tx.scan(req);
          calls.scannedRows += rows.length;
          return rows;
        },
        count: (table, index, range) => {
          calls.counts++;
          return tx.count(table, index, range);
        },
      }),
    );
});
afterAll(() => backend.close());

/** The names found and the engine calls the read made. */
async function find(args: Record<string, unknown>) {
  const before = { ...calls };
  const docs = (await backend.runQuery("auth:findMany", { model: "user", limit: 100, ...args }, internal))
    .value as StoredDoc[];
  return {
    names: docs.map((d) => d.name as string),
    scanned: calls.scannedRows - before.scannedRows,
    gets: calls.gets - before.gets,
  };
}

async function count(where: WhereClause[]) {
  const before = { ...calls };
  const value = (await backend.runQuery("auth:count", { model: "user", where }, internal)).value as number;
  return { value, counts: calls.counts - before.counts, scanned: calls.scannedRows - before.scannedRows };
}

const email = (value: string, connector?: "OR"): WhereClause => ({ field: "email", value, connector });

describe("window", () => {
  test("offset and limit must be non-negative integers", async () => {
    const refused = (message: string) => expect.objectContaining({ code: "BAD_REQUEST", message });
    for (const offset of [-1, 1.5]) {
      await expect(find({ offset }), String(offset)).rejects.toEqual(
        refused("offset must be a non-negative integer"),
      );
    }
    for (const limit of [-1, 0.5]) {
      await expect(find({ limit }), String(limit)).rejects.toEqual(
        refused("limit must be a non-negative integer"),
      );
    }
  });

  test("limit 0 reads nothing; no limit reads everything", async () => {
    expect(await find({ limit: 0 })).toEqual({ names: [], scanned: 0, gets: 0 });
    const all = (await backend.runQuery("auth:findMany", { model: "user" }, internal)).value as StoredDoc[];
    expect(all.map((d) => d.name)).toEqual(PEOPLE.map(([name]) => name));
  });

  test("offset skips matches in order, on every kind of read", async () => {
    expect((await find({ offset: 1, limit: 2 })).names).toEqual(["bob", "cid"]);
    const merged = [email("dee@x"), email("ann@x", "OR"), email("cid@x", "OR")];
    expect((await find({ where: merged, offset: 1 })).names).toEqual(["cid", "dee"]);
    // Without sortBy a merged read stops at offset + limit matches in source order, so which
    // window it returns is not defined (as in SQL without ORDER BY): only its size is.
    expect((await find({ where: merged, offset: 1, limit: 1 })).names).toHaveLength(1);
    const sorted = { field: "email", direction: "asc" };
    expect((await find({ where: merged, sortBy: sorted, offset: 1, limit: 1 })).names).toEqual(["cid"]);
  });

  test("sortBy on an unknown field is a typed error", async () => {
    await expect(find({ sortBy: { field: "nope", direction: "asc" } })).rejects.toEqual(
      expect.objectContaining({ code: "BAD_REQUEST", message: 'sortBy: "user" has no field "nope"' }),
    );
  });
});

describe("order", () => {
  test("an index read in sortBy order stops at offset + limit rows", async () => {
    expect(await find({ sortBy: { field: "email", direction: "asc" }, offset: 1, limit: 2 })).toMatchObject({
      names: ["bob", "cid"],
      scanned: 3,
    });
    expect(await find({ sortBy: { field: "email", direction: "desc" }, limit: 2 })).toMatchObject({
      names: ["eve", "dee"],
      scanned: 2,
    });
    const range = [{ field: "age", operator: "gte", value: 25 }];
    expect(await find({ where: range, sortBy: { field: "age", direction: "desc" }, limit: 1 })).toMatchObject(
      {
        names: ["dee"],
        scanned: 1,
      },
    );
  });

  test("in memory, ties on the sort field go by creation time, the whole order reversed for desc", async () => {
    // Merged sources: sorted in memory.
    const where = [email("bob@x"), email("ann@x", "OR"), email("dee@x", "OR"), email("eve@x", "OR")];
    expect((await find({ where, sortBy: { field: "age", direction: "asc" } })).names).toEqual([
      "eve",
      "ann",
      "bob",
      "dee",
    ]);
    expect((await find({ where, sortBy: { field: "age", direction: "desc" } })).names).toEqual([
      "dee",
      "bob",
      "ann",
      "eve",
    ]);
    expect((await find({ where, sortBy: { field: "age", direction: "asc" }, limit: 2 })).names).toEqual([
      "eve",
      "ann",
    ]);
  });

  test("merged reads without sortBy come in creation order", async () => {
    const where = [email("dee@x"), email("ann@x", "OR"), { field: "age", value: 20, connector: "OR" }];
    expect((await find({ where })).names).toEqual(["ann", "cid", "dee"]);
  });
});

describe("sources", () => {
  test("a document matched by two branches comes once, and counts once", async () => {
    const where = [email("ann@x"), { field: "age", value: 30, connector: "OR" } as WhereClause];
    expect((await find({ where })).names).toEqual(["ann", "bob"]);
    expect((await count(where)).value).toBe(2);
  });

  test("merged reads without sortBy stop once offset + limit distinct matches are in", async () => {
    const where = [email("ann@x"), email("bob@x", "OR"), email("cid@x", "OR")];
    expect(await find({ where, limit: 1 })).toMatchObject({ names: ["ann"], scanned: 1 });
    expect(await find({ where, limit: 2 })).toMatchObject({ names: ["ann", "bob"], scanned: 2 });
  });

  test("id lookups get only up to the limit and apply the whole where", async () => {
    const listed = { field: "_id", operator: "in", value: [ids.ann, ids.bob, ids.cid] } as WhereClause;
    expect(await find({ where: [listed], limit: 2 })).toMatchObject({ names: ["ann", "bob"], gets: 2 });
    expect((await find({ where: [listed, { field: "age", value: 30 }] })).names).toEqual(["ann", "bob"]);
    expect((await find({ where: [{ field: "_id", value: ids.ann }, email("bob@x")] })).names).toEqual([]);
    expect((await find({ where: [{ field: "_id", value: "missing" }] })).names).toEqual([]);
  });

  test("the ranges of an in stop once the limit is reached", async () => {
    const where = [{ field: "email", operator: "in", value: ["ann@x", "bob@x", "cid@x"] }];
    expect(await find({ where, limit: 1 })).toMatchObject({ names: ["ann"], scanned: 1 });
    expect(await find({ where })).toMatchObject({ names: ["ann", "bob", "cid"], scanned: 3 });
  });

  test("each range of an in reads only what the limit still needs", async () => {
    const where = [{ field: "age", operator: "in", value: [20, 30] }];
    expect(await find({ where, limit: 2 })).toMatchObject({ names: ["cid", "ann"], scanned: 2 });
  });

  test("findOne: the first match, or null", async () => {
    const findOne = async (where: WhereClause[]) =>
      (await backend.runQuery("auth:findOne", { model: "user", where }, internal)).value as StoredDoc | null;
    expect((await findOne([{ field: "age", value: 30 }]))?.name).toBe("ann");
    expect(await findOne([{ field: "age", value: 99 }])).toBeNull();
  });

  test("an inexact index read filters by the whole where", async () => {
    const where = [
      { field: "age", value: 30 },
      { field: "name", value: "bob" },
    ] as WhereClause[];
    expect((await find({ where })).names).toEqual(["bob"]);
    expect((await find({ where, limit: 1 })).names).toEqual(["bob"]);
  });
});

describe("count", () => {
  test("an exact plan counts index entries, one count per range, no rows read", async () => {
    expect(await count([])).toEqual({ value: 5, counts: 1, scanned: 0 });
    expect(await count([{ field: "age", value: 30 }])).toEqual({ value: 2, counts: 1, scanned: 0 });
    expect(await count([{ field: "age", operator: "in", value: [30, 40, 50] }])).toEqual({
      value: 3,
      counts: 3,
      scanned: 0,
    });
    expect(await count([{ field: "age", value: null }])).toEqual({ value: 1, counts: 2, scanned: 0 });
  });

  test("an exact range counts between its bounds, each bound inclusive or not", async () => {
    const counted = async (operator: string, value: number) =>
      (await count([{ field: "age", operator, value } as WhereClause])).value;
    expect(await counted("gt", 30)).toBe(1);
    expect(await counted("gte", 30)).toBe(3);
    expect(await counted("lt", 30)).toBe(1);
    expect(await counted("lte", 30)).toBe(3);
    const between = [
      { field: "age", operator: "gt", value: 20 },
      { field: "age", operator: "lt", value: 40 },
    ] as WhereClause[];
    expect(await count(between)).toEqual({ value: 2, counts: 1, scanned: 0 });
  });

  test("otherwise it reads and filters", async () => {
    expect(await count([{ field: "name", operator: "contains", value: "e" }])).toMatchObject({
      value: 2,
      counts: 0,
    });
    expect(await count([{ field: "_id", operator: "in", value: [ids.ann, ids.bob, "nope"] }])).toMatchObject({
      value: 2,
      counts: 0,
    });
    const where = [
      { field: "age", value: 30 },
      { field: "name", value: "bob" },
    ] as WhereClause[];
    expect(await count(where)).toMatchObject({ value: 1, counts: 0 });
  });

  test("bad where input is refused before anything is counted", async () => {
    await expect(count([{ field: "nope", value: 1 }])).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
