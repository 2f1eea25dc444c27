/**
 * The PostgreSQL engine on a real server started by the test: the physical layout, index use
 * (EXPLAIN), concurrent migrations and cross-instance notifications. The behaviour both engines
 * share is held by test/storage/conformance.test.ts.
 */
import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { compileRange } from "../../src/backend/db/query.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { decodeWrites, encodeWrites } from "../../src/backend/storage/commit-log/payload.ts";
import { openEngine } from "../../src/backend/storage/open.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

const schema = defineSchema({
  people: defineTable({ name: v.string(), city: v.string(), age: v.optional(v.number()) })
    .index("by_city", ["city"])
    .index("by_x", ["city", "age"]),
});

/** Resolves with the first value `register` hands to its callback. */
function next<T>(register: (cb: (value: T) => void) => () => void): Promise<T> {
  return new Promise((resolve) => {
    const stop = register((value) => {
      stop();
      resolve(value);
    });
  });
}

describe.skipIf(!postgresBinDir)("PostgreSQL engine", () => {
  const server = usePostgres();

  async function migrated(url: string) {
    const engine = new PostgresEngine({ connectionString: url });
    const catalog = new Catalog(schema);
    await engine.migrate(catalog.layout(), catalog.keysOf);
    return { engine, catalog };
  }

  it("creates one table with a bytea key column and a btree index per declared index", async () => {
    const url = await server().createDatabase();
    const { engine } = await migrated(url);
    try {
      const columns = await server().sql(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 't_people' ORDER BY column_name`,
        [],
        url,
      );
      expect(columns).toEqual([
        { column_name: "doc", data_type: "text" },
        { column_name: "id", data_type: "text" },
        { column_name: "k_by_city", data_type: "bytea" },
        { column_name: "k_by_creation_time", data_type: "bytea" },
        { column_name: "k_by_x", data_type: "bytea" },
      ]);
      const indexes = await server().sql(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 't_people' ORDER BY indexname`,
        [],
        url,
      );
      expect(indexes.map((i) => i.indexname)).toEqual([
        "i_people_by_city",
        "i_people_by_creation_time",
        "i_people_by_x",
        "t_people_pkey",
      ]);
      for (const i of indexes) expect(i.indexdef).toContain("USING btree");
      const layout = await server().sql(`SELECT tbl FROM "_layout" ORDER BY tbl`, [], url);
      expect(layout.map((r) => r.tbl)).toEqual([
        "_connections",
        "_cron_jobs",
        "_disconnects",
        "_env",
        "_instances",
        "_migrations",
        "_scheduled_jobs",
        "_schema_checks",
        "people",
      ]);
    } finally {
      await engine.close();
    }
  });

  it("round-trips documents exactly, NUL characters and key order included", async () => {
    const { engine, catalog } = await migrated(await server().createDatabase());
    try {
      const doc = { _id: "weird", _creationTime: 5, name: "a\u0000b\u{1F600}", city: "z", age: -0.5 };
      await engine.write((tx) => tx.insert("people", doc, catalog.keysOf("people", doc)));
      const back = await engine.read((tx) => tx.get("people", "weird"));
      expect(back).toEqual(doc);
      expect(Object.keys(back as object)).toEqual(Object.keys(doc));
    } finally {
      await engine.close();
    }
  });

  it("serves selective range scans from the key column's btree index (EXPLAIN)", async () => {
    const url = await server().createDatabase();
    const { engine, catalog } = await migrated(url);
    try {
      await engine.write(async (tx) => {
        for (let i = 0; i < 2000; i++) {
          const doc = { _id: `id${i}`, _creationTime: i, name: `n${i}`, city: `c${i % 100}`, age: i % 90 };
          await tx.insert("people", doc, catalog.keysOf("people", doc));
        }
      });
      await server().sql("ANALYZE t_people", [], url);
      const fields = catalog.table("people").indexes.get("by_x") as string[];
      const ranges = [
        compileRange("by_x", fields, [{ kind: "eq", field: "city", value: "c7" }]),
        compileRange("by_x", fields, [
          { kind: "eq", field: "city", value: "c7" },
          { kind: "gt", field: "age", value: 18 },
          { kind: "lte", field: "age", value: 65 },
        ]),
      ];
      for (const range of ranges) {
        for (const order of ["asc", "desc"] as const) {
          const plan = await engine.explainScan({ table: "people", index: "by_x", range, order, limit: 10 });
          expect(plan).toMatch(/Index Scan( Backward)? using i_people_by_x on t_people/);
          expect(plan).toMatch(
            /Index Cond: \(\(k_by_x >= '\\x[0-9a-f]+'::bytea\) AND \(k_by_x < '\\x[0-9a-f]+'::bytea\)\)/,
          );
          expect(plan).not.toContain("Sort");
          expect(plan).not.toContain("Seq Scan");
        }
      }
      // The same scans return the right rows.
      const rows = await engine.read(async (tx) =>
        tx.scan({ table: "people", index: "by_x", range: ranges[1], order: "asc", limit: 100 }),
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r.doc.city).toBe("c7");
        expect(r.doc.age as number).toBeGreaterThan(18);
        expect(r.doc.age as number).toBeLessThanOrEqual(65);
      }
      const expected = Array.from({ length: 2000 }, (_, i) => i).filter(
        (i) => i % 100 === 7 && i % 90 > 18 && i % 90 <= 65,
      ).length;
      expect(rows.length).toBe(expected);
    } finally {
      await engine.close();
    }
  });

  it("lets several instances migrate the same database at once", async () => {
    const url = await server().createDatabase();
    const engines = Array.from({ length: 4 }, () => new PostgresEngine({ connectionString: url }));
    try {
      const catalog = new Catalog(schema);
      await Promise.all(engines.map((e) => e.migrate(catalog.layout(), catalog.keysOf)));
      const doc = { _id: "a", _creationTime: 1, name: "n", city: "c" };
      await engines[0].write((tx) => tx.insert("people", doc, catalog.keysOf("people", doc)));
      for (const e of engines) expect(await e.read((tx) => tx.get("people", "a"))).toEqual(doc);
    } finally {
      for (const e of engines) await e.close();
    }
  });

  /** Inserts `doc` into people through `engine`, logging its write set as the runtime does. */
  function insert(engine: PostgresEngine, catalog: Catalog, doc: { _id: string; name: string }) {
    const stored = { _creationTime: 1, city: "c", ...doc };
    return engine.write(
      (tx) => tx.insert("people", stored, catalog.keysOf("people", stored)),
      () => encodeWrites([{ table: "people", id: stored._id, before: null, after: stored }]),
    );
  }
  const idsOf = (payload: string | undefined) => decodeWrites(payload)?.map((w) => w.id);

  it("delivers commits to other instances, not to itself, with write sets too large for a notification", async () => {
    const url = await server().createDatabase();
    const a = await migrated(url);
    const b = await migrated(url);
    try {
      const heardByA: (string | undefined)[] = [];
      a.engine.onExternalCommit((p) => heardByA.push(p));
      const first = next<string | undefined>((cb) => b.engine.onExternalCommit(cb));
      await insert(a.engine, a.catalog, { _id: "x", name: "small" });
      expect(idsOf(await first)).toEqual(["x"]);

      // 9,000 bytes do not fit NOTIFY: B reads the write set from the commit log.
      const big = next<string | undefined>((cb) => b.engine.onExternalCommit(cb));
      await insert(a.engine, a.catalog, { _id: "y", name: "y".repeat(9000) });
      expect(decodeWrites(await big)?.[0].after?.name).toHaveLength(9000);

      // A hears B's commit, and only B's: its own two came first and were not delivered back.
      const fromB = next<string | undefined>((cb) => a.engine.onExternalCommit(cb));
      await insert(b.engine, b.catalog, { _id: "z", name: "from b" });
      expect(idsOf(await fromB)).toEqual(["z"]);
      expect(heardByA.map(idsOf)).toEqual([["z"]]);
    } finally {
      await a.engine.close();
      await b.engine.close();
    }
  });

  it("re-listens after its notification connection is killed and catches up on what it missed", async () => {
    const url = await server().createDatabase();
    const a = await migrated(url);
    const b = await migrated(url);
    try {
      const pid = await b.engine.listenerPid();
      expect(pid).toBeTypeOf("number");
      const heard: (string | undefined)[] = [];
      b.engine.onExternalCommit((p) => heard.push(p));
      await server().sql("SELECT pg_terminate_backend($1)", [pid]);
      await insert(a.engine, a.catalog, { _id: "while-away", name: "n" });
      await eventually(() => expect(heard.map((p) => idsOf(p)?.[0])).toContain("while-away"));
      await eventually(async () => expect(await b.engine.listenerPid()).toBeDefined());
      expect(await b.engine.listenerPid()).not.toBe(pid);
      const after = next<string | undefined>((cb) => b.engine.onExternalCommit(cb));
      await insert(a.engine, a.catalog, { _id: "after", name: "n" });
      expect(idsOf(await after)).toEqual(["after"]);
    } finally {
      await a.engine.close();
      await b.engine.close();
    }
  });

  it("is selected by a postgres:// DATABASE_URL and answers ping", async () => {
    const url = await server().createDatabase();
    for (const u of [url, url.replace(/^postgres:/, "postgresql:")]) {
      const engine = openEngine(u);
      try {
        expect(engine.kind).toBe("postgres");
        await engine.migrate({ tables: {} }, () => ({}));
        await engine.ping();
      } finally {
        await engine.close();
      }
    }
  });
});
