import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { DatabaseReader as Reader, DatabaseWriter as Writer } from "../../src/backend/db/database.ts";
import { AppError } from "../../src/backend/errors.ts";
import { idTag, tableTag } from "../../src/backend/ids.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { type DataModelOf, defineSchema, defineTable } from "../../src/backend/schema.ts";
import { v } from "../../src/backend/values/index.ts";
import { inlineFunctions } from "../helpers/inline-functions.ts";
import { startTestBackend } from "../helpers/service.ts";

const schema = defineSchema({
  people: defineTable({ name: v.string(), age: v.number(), city: v.optional(v.string()) })
    .index("by_age", ["age"])
    .index("by_city_age", ["city", "age"]),
  pets: defineTable({ name: v.string() }),
});
type DatabaseReader = Reader<DataModelOf<typeof schema>>;
type DatabaseWriter = Writer<DataModelOf<typeof schema>>;
// Test bodies run inside real queries/mutations.
const inline = inlineFunctions();
const modules = { t: inline.module };

let backend: BackendRuntime;
beforeAll(async () => {
  backend = await startTestBackend({ schema, modules });
});
afterAll(() => backend.close());

async function read<T>(fn: (db: DatabaseReader) => Promise<T>): Promise<T> {
  return (await backend.runQuery("t:read", inline.register(fn))).value as T;
}
async function write<T>(fn: (db: DatabaseWriter) => Promise<T>): Promise<T> {
  return (await backend.runMutation("t:write", inline.register(fn))).value as T;
}
async function errorOf(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return e as AppError;
  }
  throw new Error("expected a rejection");
}

type Person = { _id: string; _creationTime: number; name: string; age: number; city?: string };

async function reset(people: { name: string; age: number; city?: string }[]): Promise<string[]> {
  return write(async (db) => {
    for (const p of await db.query("people").collect()) await db.delete(p._id);
    for (const p of await db.query("pets").collect()) await db.delete(p._id);
    const ids: string[] = [];
    for (const p of people) ids.push(await db.insert("people", p));
    return ids;
  });
}

describe("ids", () => {
  it("are 30 URL-safe characters: 130 random bits and a table tag", async () => {
    const ids = await write(async (db) => {
      const out: string[] = [];
      for (let i = 0; i < 500; i++) out.push(await db.insert("pets", { name: `p${i}` }));
      return out;
    });
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(/^[a-z2-7]{30}$/);
      expect(encodeURIComponent(id)).toBe(id);
      expect(idTag(id)).toBe(tableTag("pets"));
    }
    // Every one of the 26 random positions takes many values (5 random bits each).
    for (let pos = 0; pos < 26; pos++) {
      expect(new Set(ids.map((id) => id[pos])).size, `position ${pos}`).toBeGreaterThan(20);
    }
    expect(tableTag("pets")).not.toBe(tableTag("people"));
  });

  it("get returns null for an id of another table, a malformed id or an unknown table", async () => {
    const [personId] = await reset([{ name: "ann", age: 30 }]);
    const petId = await write((db) => db.insert("pets", { name: "rex" }));
    const result = await read(async (db) => ({
      person: await db.get(personId),
      typed: await db.get("people", personId),
      wrongTable: await db.get("pets", personId),
      petAsPerson: await db.get("people", petId),
      malformed: await db.get("not-an-id"),
      malformedTyped: await db.get("people", `${personId}x`),
      upper: await db.get(personId.toUpperCase()),
      unknownTag: await db.get(`${personId.slice(0, 26)}aaaa`),
      tableOf: db.tableOf(petId),
    }));
    expect(result.person).toMatchObject({ _id: personId, name: "ann", age: 30 });
    expect(result.typed).toEqual(result.person);
    expect(result.wrongTable).toBeNull();
    expect(result.petAsPerson).toBeNull();
    expect(result.malformed).toBeNull();
    expect(result.malformedTyped).toBeNull();
    expect(result.upper).toBeNull();
    expect(result.unknownTag).toBeNull();
    expect(result.tableOf).toBe("pets");
  });
});

describe("queries", () => {
  const ages = [40, 10, 30, 20, 50, 30];
  beforeEach(async () => {
    await reset(ages.map((age, i) => ({ name: `p${i}`, age, city: i % 2 ? "rome" : "oslo" })));
  });

  it("withIndex ranges: eq, gt, gte, lt, lte, with order asc and desc", async () => {
    const r = await read(async (db) => {
      const ageOf = (docs: Person[]) => docs.map((d) => d.age);
      const q = () => db.query("people");
      return {
        all: ageOf(await q().withIndex("by_age").collect()),
        gt: ageOf(
          await q()
            .withIndex("by_age", (x) => x.gt("age", 20))
            .collect(),
        ),
        gte: ageOf(
          await q()
            .withIndex("by_age", (x) => x.gte("age", 20))
            .collect(),
        ),
        lt: ageOf(
          await q()
            .withIndex("by_age", (x) => x.lt("age", 30))
            .collect(),
        ),
        lte: ageOf(
          await q()
            .withIndex("by_age", (x) => x.lte("age", 30))
            .collect(),
        ),
        between: ageOf(
          await q()
            .withIndex("by_age", (x) => x.gt("age", 10).lte("age", 40))
            .collect(),
        ),
        eq: ageOf(
          await q()
            .withIndex("by_age", (x) => x.eq("age", 30))
            .collect(),
        ),
        desc: ageOf(
          await q()
            .withIndex("by_age", (x) => x.gte("age", 20))
            .order("desc")
            .collect(),
        ),
        eqPrefix: (
          await q()
            .withIndex("by_city_age", (x) => x.eq("city", "rome").gt("age", 10))
            .order("desc")
            .collect()
        ).map((d) => `${d.city}:${d.age}`),
        creation: (await q().collect()).map((d) => d.name),
        creationDesc: (await q().order("desc").collect()).map((d) => d.name),
      };
    });
    expect(r.all).toEqual([10, 20, 30, 30, 40, 50]);
    expect(r.gt).toEqual([30, 30, 40, 50]);
    expect(r.gte).toEqual([20, 30, 30, 40, 50]);
    expect(r.lt).toEqual([10, 20]);
    expect(r.lte).toEqual([10, 20, 30, 30]);
    expect(r.between).toEqual([20, 30, 30, 40]);
    expect(r.eq).toEqual([30, 30]);
    expect(r.desc).toEqual([50, 40, 30, 30, 20]);
    expect(r.eqPrefix).toEqual(["rome:30", "rome:20"]);
    expect(r.creation).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
    expect(r.creationDesc).toEqual(["p5", "p4", "p3", "p2", "p1", "p0"]);
  });

  it("filter, first, take and unique", async () => {
    const r = await read(async (db) => ({
      filtered: (
        await db
          .query("people")
          .withIndex("by_age")
          .filter((d) => d.city === "oslo")
          .collect()
      ).map((d) => d.age),
      first: (await db.query("people").withIndex("by_age").order("desc").first())?.age,
      none: await db
        .query("people")
        .withIndex("by_age", (x) => x.gt("age", 100))
        .first(),
      take: (await db.query("people").withIndex("by_age").take(3)).map((d) => d.age),
      take0: await db.query("people").take(0),
      takeMore: (await db.query("people").take(100)).length,
      takeFiltered: (
        await db
          .query("people")
          .withIndex("by_age")
          .filter((d) => d.age >= 30)
          .take(2)
      ).map((d) => d.age),
      unique: (
        await db
          .query("people")
          .withIndex("by_age", (x) => x.eq("age", 50))
          .unique()
      )?.name,
      uniqueNone: await db
        .query("people")
        .withIndex("by_age", (x) => x.eq("age", 51))
        .unique(),
    }));
    expect(r.filtered).toEqual([30, 40, 50]);
    expect(r.first).toBe(50);
    expect(r.none).toBeNull();
    expect(r.take).toEqual([10, 20, 30]);
    expect(r.take0).toEqual([]);
    expect(r.takeMore).toBe(6);
    expect(r.takeFiltered).toEqual([30, 30]);
    expect(r.unique).toBe("p4");
    expect(r.uniqueNone).toBeNull();
    const e = await errorOf(
      read((db) =>
        db
          .query("people")
          .withIndex("by_age", (x) => x.eq("age", 30))
          .unique(),
      ),
    );
    expect(e.code).toBe("CONFLICT");
    expect((await errorOf(read((db) => db.query("people").take(-1)))).code).toBe("BAD_REQUEST");
  });

  it("rejects range operations out of index order with BAD_REQUEST", async () => {
    const bad: ((db: DatabaseReader) => Promise<unknown>)[] = [
      (db) =>
        db
          .query("people")
          .withIndex("by_city_age", (x) => x.eq("age", 1))
          .collect(),
      (db) =>
        db
          .query("people")
          .withIndex("by_city_age", (x) => x.gt("city", "a").eq("age", 1))
          .collect(),
      (db) =>
        db
          .query("people")
          .withIndex("by_city_age", (x) => x.gt("age", 1))
          .collect(),
      (db) =>
        db
          .query("people")
          .withIndex("by_age", (x) => x.gt("age", 1).gte("age", 2))
          .collect(),
      (db) =>
        db
          .query("people")
          .withIndex("by_age", (x) => x.lt("age", 1).lte("age", 2))
          .collect(),
      (db) => (db.query("people") as any).withIndex("by_name").collect(),
    ];
    for (const fn of bad) {
      const e = await errorOf(read(fn));
      expect(e.code).toBe("BAD_REQUEST");
      expect(e.status).toBe(400);
    }
  });

  it("paginates with cursors: no duplicates and no gaps, even with inserts between pages", async () => {
    const initial = Array.from({ length: 23 }, (_, i) => ({ name: `n${i}`, age: i * 10 }));
    await reset(initial);
    const seen: number[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    for (let page = 0; page < 20; page++) {
      const result: { page: Person[]; isDone: boolean; continueCursor: string } = await read((db) =>
        db.query("people").withIndex("by_age").paginate({ numItems: 4, cursor }),
      );
      seen.push(...result.page.map((d) => d.age));
      if (result.isDone) break;
      cursor = result.continueCursor;
      // One insert behind the cursor (never shown) and one ahead of it (must be shown).
      const last = seen[seen.length - 1];
      await write(async (db) => {
        await db.insert("people", { name: "behind", age: last - 5 });
        await db.insert("people", { name: "ahead", age: last + 1000 + inserted });
      });
      inserted++;
    }
    const expected = await read(async (db) =>
      (await db.query("people").withIndex("by_age").collect())
        .filter((d) => d.name !== "behind")
        .map((d) => d.age),
    );
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);
    for (const p of initial) expect(seen).toContain(p.age);
  });

  it("paginates filtered queries and descending order without losing items", async () => {
    await reset(Array.from({ length: 10 }, (_, i) => ({ name: `n${i}`, age: i })));
    for (const order of ["asc", "desc"] as const) {
      const seen: number[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 20; i++) {
        const result: { page: Person[]; isDone: boolean; continueCursor: string } = await read((db) =>
          db
            .query("people")
            .withIndex("by_age")
            .order(order)
            .filter((d) => d.age % 2 === 0)
            .paginate({ numItems: 2, cursor }),
        );
        seen.push(...result.page.map((d) => d.age));
        if (result.isDone) break;
        cursor = result.continueCursor;
      }
      expect(seen).toEqual(order === "asc" ? [0, 2, 4, 6, 8] : [8, 6, 4, 2, 0]);
    }
    const e = await errorOf(read((db) => db.query("people").paginate({ numItems: 0, cursor: null })));
    expect(e.code).toBe("BAD_REQUEST");
  });
});

describe("writes", () => {
  it("insert, patch (undefined removes a field), replace and delete", async () => {
    await reset([]);
    const id = await write((db) => db.insert("people", { name: "ann", age: 30, city: "oslo" }));
    const created = await read((db) => db.get(id));
    expect(created).toEqual({
      _id: id,
      _creationTime: expect.any(Number),
      name: "ann",
      age: 30,
      city: "oslo",
    });

    await write((db) => db.patch(id, { age: 31, city: undefined }));
    expect(await read((db) => db.get(id))).toEqual({ ...created, age: 31, city: undefined });
    expect(Object.keys((await read((db) => db.get(id)))!)).not.toContain("city");

    await write((db) => db.patch("people", id, { city: "rome" }));
    expect(await read((db) => db.get(id))).toMatchObject({ city: "rome", age: 31 });

    await write((db) => db.replace(id, { name: "bob", age: 5 }));
    expect(await read((db) => db.get(id))).toEqual({
      _id: id,
      _creationTime: created!._creationTime,
      name: "bob",
      age: 5,
    });

    // Index entries follow the writes.
    expect(
      await read((db) =>
        db
          .query("people")
          .withIndex("by_age", (q) => q.eq("age", 5))
          .unique(),
      ),
    ).toMatchObject({
      _id: id,
    });
    expect(
      await read((db) =>
        db
          .query("people")
          .withIndex("by_age", (q) => q.eq("age", 31))
          .first(),
      ),
    ).toBeNull();

    await write((db) => db.delete(id));
    expect(await read((db) => db.get(id))).toBeNull();
    expect(await read((db) => db.query("people").withIndex("by_age").collect())).toEqual([]);
  });

  it("refuses to change system fields or touch missing documents", async () => {
    const [id] = await reset([{ name: "ann", age: 1 }]);
    expect((await errorOf(write((db) => db.patch(id, { _id: "other" } as any)))).code).toBe(
      "SCHEMA_VIOLATION",
    );
    expect((await errorOf(write((db) => db.patch(id, { _creationTime: 5 } as any)))).code).toBe(
      "SCHEMA_VIOLATION",
    );
    await write((db) => db.delete(id));
    for (const op of [
      (db: DatabaseWriter) => db.patch(id, { age: 2 }),
      (db: DatabaseWriter) => db.replace(id, { name: "x", age: 2 }),
      (db: DatabaseWriter) => db.delete(id),
      (db: DatabaseWriter) => db.patch("pets", id, { name: "x" }),
    ]) {
      expect((await errorOf(write(op))).code).toBe("NOT_FOUND");
    }
  });

  it("a mutation reads its own writes", async () => {
    await reset([]);
    const r = await write(async (db) => {
      const id = await db.insert("people", { name: "ann", age: 7 });
      await db.patch(id, { age: 8 });
      return {
        got: await db.get(id),
        viaIndex: await db
          .query("people")
          .withIndex("by_age", (q) => q.eq("age", 8))
          .collect(),
      };
    });
    expect((r.got as Person).age).toBe(8);
    expect(r.viaIndex).toHaveLength(1);
  });
});
