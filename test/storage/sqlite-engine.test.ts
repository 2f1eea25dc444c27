import Database from "@service-auth/better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { compileRange } from "../../src/backend/db/query.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { openEngine } from "../../src/backend/storage/open.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { startTestBackend } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const { query, mutation } = functionsFor();

/** Generic functions over table "people", so every schema version can share them. */
const people = {
  add: mutation({ args: { doc: v.any() }, handler: (ctx, { doc }) => ctx.db.insert("people", doc) }),
  all: query({ args: {}, handler: (ctx) => ctx.db.query("people").collect() }),
  byIndex: query({
    args: { index: v.string(), field: v.string(), value: v.any() },
    handler: (ctx, { index, field, value }) =>
      ctx.db
        .query("people")
        .withIndex(index, (q) => q.eq(field, value))
        .collect(),
  }),
};

const schemaA = defineSchema({ people: defineTable({ name: v.string(), city: v.string() }) });
const schemaB = defineSchema({
  people: defineTable({ name: v.string(), city: v.string(), age: v.optional(v.number()) })
    .index("by_city", ["city"])
    .index("by_x", ["name"]),
});
const schemaC = defineSchema({
  people: defineTable({ name: v.string(), city: v.string(), age: v.optional(v.number()) })
    .index("by_city", ["city"])
    .index("by_x", ["city", "age"]),
});

const open: BackendRuntime[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
async function start(schema: typeof schemaA, filename: string) {
  const backend = await startTestBackend({ schema, modules: { people }, filename });
  open.push(backend);
  return backend;
}
async function restart(backend: BackendRuntime, schema: typeof schemaA, filename: string) {
  open.splice(open.indexOf(backend), 1);
  await backend.close();
  return start(schema, filename);
}

describe("SQLite engine", () => {
  it("stores a WAL-mode database file with one table and one index per declared index", async () => {
    const file = tempDatabaseFile();
    const backend = await start(schemaB, file);
    await backend.runMutation("people:add", { doc: { name: "a", city: "x" } });
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      const objects = raw
        .prepare(`SELECT type, name FROM sqlite_master WHERE name LIKE '%people%' ORDER BY name`)
        .all() as { type: string; name: string }[];
      expect(objects).toEqual(
        expect.arrayContaining([
          { type: "table", name: "t_people" },
          { type: "index", name: "i_people_by_creation_time" },
          { type: "index", name: "i_people_by_city" },
          { type: "index", name: "i_people_by_x" },
        ]),
      );
    } finally {
      raw.close();
    }
  });

  it("adds a field and an index to an existing database without losing rows", async () => {
    const file = tempDatabaseFile();
    let backend = await start(schemaA, file);
    const ids: string[] = [];
    for (const [name, city] of [
      ["ann", "paris"],
      ["bob", "rome"],
      ["cid", "paris"],
    ]) {
      ids.push((await backend.runMutation("people:add", { doc: { name, city } })).value as string);
    }
    backend = await restart(backend, schemaB, file);
    const all = (await backend.runQuery("people:all", {})).value as { _id: string; name: string }[];
    expect(all.map((d) => d._id)).toEqual(ids);
    // Old rows are found through the new index…
    const paris = (
      await backend.runQuery("people:byIndex", { index: "by_city", field: "city", value: "paris" })
    ).value as { name: string }[];
    expect(paris.map((d) => d.name)).toEqual(["ann", "cid"]);
    // …and the new field can be written.
    await backend.runMutation("people:add", { doc: { name: "dan", city: "paris", age: 40 } });
    const again = (
      await backend.runQuery("people:byIndex", { index: "by_city", field: "city", value: "paris" })
    ).value as { name: string }[];
    expect(again.map((d) => d.name)).toEqual(["ann", "cid", "dan"]);
  });

  it("rebuilds an index whose fields changed", async () => {
    const file = tempDatabaseFile();
    let backend = await start(schemaB, file);
    await backend.runMutation("people:add", { doc: { name: "ann", city: "paris", age: 30 } });
    await backend.runMutation("people:add", { doc: { name: "bob", city: "rome" } });
    const byName = await backend.runQuery("people:byIndex", { index: "by_x", field: "name", value: "bob" });
    expect((byName.value as unknown[]).length).toBe(1);

    backend = await restart(backend, schemaC, file);
    const byCity = (
      await backend.runQuery("people:byIndex", { index: "by_x", field: "city", value: "paris" })
    ).value as { name: string }[];
    expect(byCity.map((d) => d.name)).toEqual(["ann"]);
    await expect(
      backend.runQuery("people:byIndex", { index: "by_x", field: "name", value: "bob" }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    // Going back rebuilds it again from the documents.
    backend = await restart(backend, schemaB, file);
    const back = await backend.runQuery("people:byIndex", { index: "by_x", field: "name", value: "bob" });
    expect((back.value as { city: string }[]).map((d) => d.city)).toEqual(["rome"]);
  });

  it("serves withIndex reads from the SQL index (query plan)", async () => {
    const file = tempDatabaseFile();
    const engine = new SqliteEngine({ filename: file });
    const catalog = new Catalog(schemaC);
    await engine.migrate(catalog.layout(), catalog.keysOf);
    try {
      const fields = catalog.table("people").indexes.get("by_x")!;
      const ranges = [
        compileRange("by_x", fields, [{ kind: "eq", field: "city", value: "paris" }]),
        compileRange("by_x", fields, [
          { kind: "eq", field: "city", value: "paris" },
          { kind: "gt", field: "age", value: 18 },
          { kind: "lte", field: "age", value: 65 },
        ]),
        compileRange("by_x", fields, []),
      ];
      for (const range of ranges) {
        for (const order of ["asc", "desc"] as const) {
          const plan = await engine.explainScan({ table: "people", index: "by_x", range, order, limit: 10 });
          expect(plan).toContain("USING INDEX i_people_by_x");
          expect(plan).not.toMatch(/SCAN t_people\s*$/m);
          expect(plan).not.toContain("TEMP B-TREE");
          if (range.lower)
            expect(plan).toMatch(/SEARCH t_people USING INDEX i_people_by_x \(k_by_x>\? AND k_by_x<\?\)/);
        }
      }
    } finally {
      await engine.close();
    }
  });

  it("sees commits of another process's connection and reports them", async () => {
    const file = tempDatabaseFile();
    const catalog = new Catalog(schemaA);
    const a = new SqliteEngine({ filename: file, pollIntervalMs: 20 });
    const b = new SqliteEngine({ filename: file, pollIntervalMs: 20 });
    await a.migrate(catalog.layout(), catalog.keysOf);
    await b.migrate(catalog.layout(), catalog.keysOf);
    try {
      const seen = new Promise<void>((resolve) => a.onExternalCommit(() => resolve()));
      const doc = { _id: "x", _creationTime: 1, name: "n", city: "c" };
      await b.write((tx) => tx.insert("people", doc, catalog.keysOf("people", doc)));
      await seen;
      expect(await a.read((tx) => tx.get("people", "x"))).toEqual(doc);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("rolls back a write transaction that throws", async () => {
    const engine = new SqliteEngine({ filename: tempDatabaseFile() });
    const catalog = new Catalog(schemaA);
    await engine.migrate(catalog.layout(), catalog.keysOf);
    try {
      const doc = { _id: "y", _creationTime: 1, name: "n", city: "c" };
      await expect(
        engine.write(async (tx) => {
          await tx.insert("people", doc, catalog.keysOf("people", doc));
          throw new Error("abort");
        }),
      ).rejects.toThrow("abort");
      expect(await engine.read((tx) => tx.get("people", "y"))).toBeNull();
      // The writer is usable afterwards.
      await engine.write((tx) => tx.insert("people", doc, catalog.keysOf("people", doc)));
      expect(await engine.read((tx) => tx.count("people", "by_creation_time", {}))).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it("selects storage from DATABASE_URL", async () => {
    // postgres:// selects PostgreSQL (tested against a real server in test/postgres/engine.test.ts and test/storage/conformance.test.ts).
    const pg = openEngine("postgres://localhost/db");
    expect(pg.kind).toBe("postgres");
    await pg.close();
    const file = tempDatabaseFile();
    const engine = openEngine(`sqlite:${file}`);
    try {
      expect(engine.kind).toBe("sqlite");
      await engine.migrate({ tables: {} }, () => ({}));
      await engine.ping();
    } finally {
      await engine.close();
    }
  });
});
