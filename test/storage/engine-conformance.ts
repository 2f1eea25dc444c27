/**
 * The storage-engine conformance suite: the behaviour every `StorageEngine` must have, run against
 * SQLite and PostgreSQL alike (conformance.test.ts) so both are held to the same contract.
 */
import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { compileRange } from "../../src/backend/db/query.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import type { StorageEngine, StoredDocument, WriteTransaction } from "../../src/backend/storage/engine.ts";
import { postgresDialect, sqliteDialect } from "../../src/backend/storage/sql/dialect.ts";
import { v } from "../../src/backend/values/index.ts";

/** A fresh, empty store; `open()` opens another engine on that same store (a restart, or a second process). */
export interface EngineStore {
  open(): StorageEngine;
  /** Runs one SQL statement on the store outside any engine and returns its rows. */
  sql(text: string): Promise<Record<string, unknown>[]>;
}

export interface EngineFactory {
  /** Called once per test: a fresh empty store. */
  newStore(): Promise<EngineStore>;
}

const schemaV1 = defineSchema({
  people: defineTable({ name: v.string(), city: v.string(), age: v.optional(v.number()) }).index("by_city", [
    "city",
    "age",
  ]),
  counters: defineTable({ n: v.number() }),
});
const schemaV2 = defineSchema({
  people: defineTable({ name: v.string(), city: v.string(), age: v.optional(v.number()) })
    .index("by_city", ["city", "age"])
    .index("by_name", ["name"]),
  counters: defineTable({ n: v.number() }),
});
/** `by_city` rebuilt from different fields. */
/** Two tables whose indexes older versions both named `i_a_b_c`. */
const underscored = defineSchema({
  a_b: defineTable({ x: v.string() }).index("c", ["x"]),
  a: defineTable({ y: v.string() }).index("b_c", ["y"]),
});
const schemaV3 = defineSchema({
  people: defineTable({ name: v.string(), city: v.string(), age: v.optional(v.number()) }).index("by_city", [
    "age",
  ]),
  counters: defineTable({ n: v.number() }),
});

type Person = StoredDocument & { name: string; city: string; age?: number };

function person(i: number, name: string, city: string, age?: number): Person {
  const doc: Person = { _id: `p${String(i).padStart(4, "0")}`, _creationTime: 1_000 + i, name, city };
  if (age !== undefined) doc.age = age;
  return doc;
}

const PEOPLE: Person[] = [
  person(1, "ann", "paris", 30),
  person(2, "bob", "rome", 25),
  person(3, "cid", "paris", 41),
  person(4, "dan", "paris"),
  person(5, "eve", "oslo", 30),
  person(6, "fay", "paris", 19),
  person(7, "gus", "rome", 60),
];

export function engineConformance(name: string, factory: EngineFactory): void {
  describe(`${name} engine conformance`, () => {
    const opened: StorageEngine[] = [];

    type AnySchema = typeof schemaV1 | typeof schemaV2 | typeof schemaV3 | typeof underscored;
    async function start(
      schema: AnySchema = schemaV1,
    ): Promise<{ engine: StorageEngine; catalog: Catalog; store: EngineStore }> {
      const store = await factory.newStore();
      const { engine, catalog } = await reopen(store, schema);
      return { engine, catalog, store };
    }
    async function reopen(store: EngineStore, schema: AnySchema = schemaV1) {
      const engine = store.open();
      opened.push(engine);
      const catalog = new Catalog(schema);
      await engine.migrate(catalog.layout(), catalog.keysOf);
      return { engine, catalog };
    }
    async function closeAll() {
      for (const e of opened.splice(0)) await e.close();
    }
    const insertAll = (engine: StorageEngine, catalog: Catalog, docs: StoredDocument[], table = "people") =>
      engine.write(async (tx) => {
        for (const d of docs) await tx.insert(table, d, catalog.keysOf(table, d));
      });
    const range = (catalog: Catalog, index: string, ops: Parameters<typeof compileRange>[2]) =>
      compileRange(index, catalog.table("people").indexes.get(index) as string[], ops);

    it("gets documents by id and returns null for missing ones", async () => {
      try {
        const { engine, catalog } = await start();
        await insertAll(engine, catalog, PEOPLE);
        expect(await engine.read((tx) => tx.get("people", "p0003"))).toEqual(PEOPLE[2]);
        expect(await engine.read((tx) => tx.get("people", "nope"))).toBeNull();
      } finally {
        await closeAll();
      }
    });

    it("scans index ranges in both directions, with limits, and counts them", async () => {
      try {
        const { engine, catalog } = await start();
        // Insert out of order: results must come back in key order, not insertion order.
        await insertAll(engine, catalog, [...PEOPLE].reverse());
        const scan = (index: string, r: ReturnType<typeof range>, order: "asc" | "desc", limit = 100) =>
          engine.read(async (tx) => tx.scan({ table: "people", index, range: r, order, limit }));

        const all = await scan("by_creation_time", {}, "asc");
        expect(all.map((r) => r.doc._id)).toEqual(PEOPLE.map((p) => p._id));
        const desc = await scan("by_creation_time", {}, "desc", 3);
        expect(desc.map((r) => r.doc._id)).toEqual(["p0007", "p0006", "p0005"]);

        const paris = range(catalog, "by_city", [{ kind: "eq", field: "city", value: "paris" }]);
        // Missing age (undefined) sorts first, then ages ascending.
        expect((await scan("by_city", paris, "asc")).map((r) => r.doc.name)).toEqual([
          "dan",
          "fay",
          "ann",
          "cid",
        ]);
        expect((await scan("by_city", paris, "desc", 2)).map((r) => r.doc.name)).toEqual(["cid", "ann"]);

        const adults = range(catalog, "by_city", [
          { kind: "eq", field: "city", value: "paris" },
          { kind: "gte", field: "age", value: 20 },
          { kind: "lt", field: "age", value: 41 },
        ]);
        expect((await scan("by_city", adults, "asc")).map((r) => r.doc.name)).toEqual(["ann"]);

        // Keys are returned and ordered bytewise, exactly as the encoding promises.
        const rows = await scan("by_city", {}, "asc");
        for (let i = 1; i < rows.length; i++)
          expect(Buffer.compare(rows[i - 1].key, rows[i].key)).toBeLessThan(0);
        expect(rows[0].key.equals(catalog.keysOf("people", rows[0].doc).by_city)).toBe(true);

        await engine.read(async (tx) => {
          expect(await tx.count("people", "by_city", paris)).toBe(4);
          expect(await tx.count("people", "by_city", adults)).toBe(1);
          expect(await tx.count("people", "by_creation_time", {})).toBe(7);
          expect(
            await tx.count(
              "people",
              "by_city",
              range(catalog, "by_city", [{ kind: "eq", field: "city", value: "x" }]),
            ),
          ).toBe(0);
        });
      } finally {
        await closeAll();
      }
    });

    it("replaces and deletes documents, keeping index keys in step", async () => {
      try {
        const { engine, catalog } = await start();
        await insertAll(engine, catalog, PEOPLE);
        const moved = { ...PEOPLE[0], city: "oslo" };
        await engine.write(async (tx) => {
          await tx.replace("people", moved, catalog.keysOf("people", moved));
          await tx.delete("people", "p0002");
        });
        const oslo = range(catalog, "by_city", [{ kind: "eq", field: "city", value: "oslo" }]);
        const rows = await engine.read(async (tx) =>
          tx.scan({ table: "people", index: "by_city", range: oslo, order: "asc", limit: 10 }),
        );
        expect(rows.map((r) => r.doc.name).sort()).toEqual(["ann", "eve"]);
        expect(await engine.read((tx) => tx.get("people", "p0001"))).toEqual(moved);
        expect(await engine.read((tx) => tx.get("people", "p0002"))).toBeNull();
        expect(await engine.read((tx) => tx.count("people", "by_creation_time", {}))).toBe(6);
        // Replacing a document that does not exist is an error, not a silent insert.
        const ghost = person(99, "ghost", "nowhere");
        await expect(
          engine.write((tx) => tx.replace("people", ghost, catalog.keysOf("people", ghost))),
        ).rejects.toThrow(`Document ${ghost._id} not found in "people"`);
        expect(await engine.read((tx) => tx.get("people", ghost._id))).toBeNull();
      } finally {
        await closeAll();
      }
    });

    it("rolls back everything when the write function throws, and stays usable", async () => {
      try {
        const { engine, catalog } = await start();
        await insertAll(engine, catalog, PEOPLE.slice(0, 2));
        await expect(
          engine.write(async (tx) => {
            await tx.insert("people", PEOPLE[2], catalog.keysOf("people", PEOPLE[2]));
            await tx.delete("people", "p0001");
            throw new Error("changed my mind");
          }),
        ).rejects.toThrow("changed my mind");
        expect(await engine.read((tx) => tx.get("people", "p0003"))).toBeNull();
        expect(await engine.read((tx) => tx.get("people", "p0001"))).toEqual(PEOPLE[0]);
        await insertAll(engine, catalog, [PEOPLE[2]]);
        expect(await engine.read((tx) => tx.count("people", "by_creation_time", {}))).toBe(3);
      } finally {
        await closeAll();
      }
    });

    it("propagates a database error (duplicate id) without retrying the function", async () => {
      try {
        const { engine, catalog } = await start();
        await insertAll(engine, catalog, [PEOPLE[0]]);
        let runs = 0;
        await expect(
          engine.write(async (tx) => {
            runs++;
            await tx.insert("people", PEOPLE[1], catalog.keysOf("people", PEOPLE[1]));
            await tx.insert("people", PEOPLE[0], catalog.keysOf("people", PEOPLE[0]));
          }),
        ).rejects.toThrow(/UNIQUE constraint failed|duplicate key value/); // SQLite's / PostgreSQL's words
        expect(runs).toBe(1);
        expect(await engine.read((tx) => tx.get("people", "p0002"))).toBeNull();
      } finally {
        await closeAll();
      }
    });

    it("reads from one snapshot: a commit during a read is not seen by it", async () => {
      try {
        const { engine, catalog } = await start();
        await insertAll(engine, catalog, PEOPLE.slice(0, 3));
        const seen = await engine.read(async (tx) => {
          const before = await tx.count("people", "by_creation_time", {});
          const firstGet = await tx.get("people", "p0001");
          // Another transaction commits while this read is open.
          await engine.write(async (w) => {
            await w.insert("people", PEOPLE[3], catalog.keysOf("people", PEOPLE[3]));
            const changed = { ...PEOPLE[0], name: "changed" };
            await w.replace("people", changed, catalog.keysOf("people", changed));
          });
          const after = await tx.count("people", "by_creation_time", {});
          const rows = await tx.scan({
            table: "people",
            index: "by_creation_time",
            range: {},
            order: "asc",
            limit: 10,
          });
          return { before, after, firstGet, secondGet: await tx.get("people", "p0001"), rows: rows.length };
        });
        expect(seen.after).toBe(seen.before);
        expect(seen.rows).toBe(3);
        expect(seen.secondGet).toEqual(seen.firstGet);
        // A new read sees the commit.
        expect(await engine.read((tx) => tx.count("people", "by_creation_time", {}))).toBe(4);
        expect((await engine.read((tx) => tx.get("people", "p0001")))?.name).toBe("changed");
      } finally {
        await closeAll();
      }
    });

    it("serializes concurrent read-modify-write transactions: 20 increments end at 20", async () => {
      try {
        const { engine, catalog } = await start();
        const counter = { _id: "c1", _creationTime: 1, n: 0 };
        await insertAll(engine, catalog, [counter], "counters");
        const increment = (tx: WriteTransaction) =>
          (async () => {
            const doc = (await tx.get("counters", "c1")) as typeof counter;
            // Yield so the transactions really interleave.
            await new Promise((r) => setImmediate(r));
            const next = { ...doc, n: doc.n + 1 };
            await tx.replace("counters", next, catalog.keysOf("counters", next));
            return next.n;
          })();
        const results = await Promise.all(Array.from({ length: 20 }, () => engine.write(increment)));
        expect((await engine.read((tx) => tx.get("counters", "c1")))?.n).toBe(20);
        // Every transaction saw a distinct value: none overwrote another's increment.
        expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      } finally {
        await closeAll();
      }
    });

    it("migrates existing data: a new index is backfilled, a changed index rebuilt, no rows lost", async () => {
      try {
        const { engine, store } = await start(schemaV1);
        const catalogV1 = new Catalog(schemaV1);
        await insertAll(engine, catalogV1, PEOPLE);
        await engine.close();
        opened.splice(opened.indexOf(engine), 1);

        const v2 = await reopen(store, schemaV2);
        const byName = (r: ReturnType<typeof range>) =>
          v2.engine.read(async (tx) =>
            tx.scan({ table: "people", index: "by_name", range: r, order: "asc", limit: 100 }),
          );
        const all = await byName({});
        expect(all.map((r) => r.doc.name)).toEqual(PEOPLE.map((p) => p.name));
        const cid = await byName(range(v2.catalog, "by_name", [{ kind: "eq", field: "name", value: "cid" }]));
        expect(cid.map((r) => r.doc._id)).toEqual(["p0003"]);
        // The backfilled keys equal the ones a fresh insert would get.
        for (const row of all)
          expect(row.key.equals(v2.catalog.keysOf("people", row.doc).by_name)).toBe(true);
        // Old indexes still work and new writes maintain the new index.
        const extra = person(8, "abe", "lima", 50);
        await insertAll(v2.engine, v2.catalog, [extra]);
        expect((await byName({}))[0].doc.name).toBe("abe");
        expect(await v2.engine.read((tx) => tx.count("people", "by_city", {}))).toBe(8);
        await v2.engine.close();
        opened.splice(opened.indexOf(v2.engine), 1);

        // Same index name, other fields: rebuilt from the documents.
        const v3 = await reopen(store, schemaV3);
        const age30 = compileRange("by_city", v3.catalog.table("people").indexes.get("by_city") as string[], [
          { kind: "eq", field: "age", value: 30 },
        ]);
        const rows = await v3.engine.read(async (tx) =>
          tx.scan({ table: "people", index: "by_city", range: age30, order: "asc", limit: 100 }),
        );
        expect(rows.map((r) => r.doc.name)).toEqual(["ann", "eve"]);
        expect(await v3.engine.read((tx) => tx.count("people", "by_creation_time", {}))).toBe(8);
      } finally {
        await closeAll();
      }
    });

    it("opens a database whose index names an older version wrote, moving them without data loss", async () => {
      try {
        const { engine, catalog, store } = await start(underscored);
        const docsA = [
          { _id: "a1", _creationTime: 1, y: "p" },
          { _id: "a2", _creationTime: 2, y: "q" },
        ];
        const docsAB = [
          { _id: "b1", _creationTime: 3, x: "p" },
          { _id: "b2", _creationTime: 4, x: "p" },
        ];
        await insertAll(engine, catalog, docsA, "a");
        await insertAll(engine, catalog, docsAB, "a_b");
        const indexesSql = (engine.kind === "sqlite" ? sqliteDialect : postgresDialect).indexesSql;
        const indexes = async () =>
          (await store.sql(indexesSql))
            .filter((r) => String(r.name).startsWith("i_a"))
            .map((r) => `${r.name} on ${r.tbl}`)
            .sort();
        const current = [
          "i_a__b_by_creation_time on t_a_b",
          "i_a__b_c on t_a_b",
          "i_a_b_c on t_a",
          "i_a_by_creation_time on t_a",
        ];
        expect(await indexes()).toEqual(current);
        await engine.close();
        opened.splice(opened.indexOf(engine), 1);

        // The layout the previous version wrote: names `i_<table>_<index>`, so table `a_b`, created
        // first, took `i_a_b_c` and table `a`'s index `b_c` was never created.
        for (const statement of [
          `DROP INDEX "i_a__b_by_creation_time"`,
          `DROP INDEX "i_a__b_c"`,
          `DROP INDEX "i_a_b_c"`,
          `CREATE INDEX "i_a_b_by_creation_time" ON "t_a_b" ("k_by_creation_time")`,
          `CREATE INDEX "i_a_b_c" ON "t_a_b" ("k_c")`,
        ]) {
          await store.sql(statement);
        }
        expect(await indexes()).toEqual([
          "i_a_b_by_creation_time on t_a_b",
          "i_a_b_c on t_a_b",
          "i_a_by_creation_time on t_a",
        ]);

        const reopened = await reopen(store, underscored);
        expect(await indexes()).toEqual(current);
        const eq = (table: string, index: string, field: string, value: string) =>
          compileRange(index, reopened.catalog.table(table).indexes.get(index) as string[], [
            { kind: "eq", field, value },
          ]);
        await reopened.engine.read(async (tx) => {
          expect(await tx.count("a", "b_c", eq("a", "b_c", "y", "p"))).toBe(1);
          expect(await tx.count("a_b", "c", eq("a_b", "c", "x", "p"))).toBe(2);
          expect(await tx.count("a_b", "by_creation_time", {})).toBe(2);
          const rows = await tx.scan({
            table: "a",
            index: "by_creation_time",
            range: {},
            order: "asc",
            limit: 9,
          });
          expect(rows.map((r) => r.doc)).toEqual(docsA);
          expect(await tx.get("a_b", "b2")).toEqual(docsAB[1]);
        });
        const plan = await reopened.engine.explainScan({
          table: "a",
          index: "b_c",
          range: eq("a", "b_c", "y", "q"),
          order: "asc",
          limit: 5,
        });
        expect(plan).toContain("i_a_b_c");
        // Once moved, the names stay.
        await reopened.engine.migrate(reopened.catalog.layout(), reopened.catalog.keysOf);
        expect(await indexes()).toEqual(current);
      } finally {
        await closeAll();
      }
    });

    it("migrates idempotently and answers ping", async () => {
      try {
        const { engine, catalog, store } = await start();
        await insertAll(engine, catalog, PEOPLE.slice(0, 2));
        await engine.migrate(catalog.layout(), catalog.keysOf);
        const second = await reopen(store, schemaV1);
        await second.engine.ping();
        expect(await second.engine.read((tx) => tx.count("people", "by_city", {}))).toBe(2);
      } finally {
        await closeAll();
      }
    });
  });
}
