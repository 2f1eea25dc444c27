import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseWriter as Writer } from "../../src/backend/db/database.ts";
import { AppError, type ValidationError } from "../../src/backend/errors.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import {
  type DataModelOf,
  defineEnt,
  defineEntSchema,
  defineSchema,
  defineTable,
} from "../../src/backend/schema.ts";
import { type Id, v } from "../../src/backend/values/index.ts";
import schema from "../fixtures/schema.ts";
import { startTestBackend } from "../helpers/service.ts";

type DatabaseWriter = Writer<DataModelOf<typeof schema>>;
const { query, mutation } = functionsFor();
const bodies = new Map<string, (db: DatabaseWriter) => Promise<unknown>>();
let counter = 0;
const modules = {
  t: {
    write: mutation({
      args: { name: v.string() },
      handler: (ctx, { name }) => bodies.get(name)!(ctx.db as any),
    }),
    items: query({ args: {}, handler: (ctx) => ctx.db.query("items").collect() }),
    count: query({
      args: {},
      handler: async (ctx) =>
        (await ctx.db.query("items").collect()).length + (await ctx.db.query("messages").collect()).length,
    }),
  },
};

let backend: BackendRuntime;
beforeAll(async () => {
  backend = await startTestBackend({ schema, modules });
});
afterAll(() => backend.close());

function write(fn: (db: DatabaseWriter) => Promise<unknown>) {
  const name = `w${counter++}`;
  bodies.set(name, fn);
  return backend.runMutation("t:write", { name });
}
async function violation(fn: (db: DatabaseWriter) => Promise<unknown>): Promise<ValidationError> {
  // ValidationError for field mismatches; a plain AppError for documents that are not objects.
  const before = (await backend.runQuery("t:count", {})).value;
  const error = await write(fn).then(
    () => null,
    (e) => e,
  );
  expect(error, "expected a schema violation").toBeInstanceOf(AppError);
  expect(error.code).toBe("SCHEMA_VIOLATION");
  expect(error.status).toBe(400);
  // Nothing changed: every write of the mutation rolled back.
  expect((await backend.runQuery("t:count", {})).value).toBe(before);
  return error;
}

const item = { name: "pen", price: 2, tags: ["a"], status: "live" as const };

describe("schema enforcement", () => {
  it("accepts documents that match the schema", async () => {
    const owner = (await write((db) => db.insert("messages", { body: "b", author: "a" })))
      .value as Id<"messages">;
    await write(async (db) => {
      await db.insert("items", item);
      await db.insert("items", {
        ...item,
        status: "draft",
        owner,
        meta: { color: "red", size: 3 },
        extra: { a: "x", b: null },
      });
    });
    const items = (await backend.runQuery("t:items", {})).value as unknown[];
    expect(items).toHaveLength(2);
    expect(items[1]).toMatchObject({ owner, meta: { color: "red", size: 3 }, extra: { a: "x", b: null } });
  });

  it("rejects bad inserts naming the table, field and expected type, and rolls back the mutation", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...item, name: 1 }, "items.name", "string"],
      [{ ...item, price: "2" }, "items.price", "number"],
      [{ ...item, tags: ["a", 2] }, "items.tags[1]", "string"],
      [{ ...item, status: "gone" }, "items.status", '"draft" | "live"'],
      [{ ...item, owner: 5 }, "items.owner", "id<messages>"],
      [{ ...item, meta: { size: 1 } }, "items.meta.color", "string"],
      [{ ...item, extra: { a: 1 } }, "items.extra.a", "string | null"],
      [{ name: "x", price: 1, tags: [] }, "items.status", '"draft" | "live"'],
      [{ ...item, unknown: true }, "items.unknown", "no such field"],
    ];
    for (const [doc, path, expected] of cases) {
      const e = await violation(async (db) => {
        await db.insert("messages", { body: "first write of the mutation", author: "x" });
        await db.insert("items", doc as any);
      });
      expect(e.path).toBe(path);
      expect(e.expected).toBe(expected);
      expect(e.data).toEqual({ path, expected });
      expect(e.message).toContain(path);
    }
  });

  it("rejects bad patches and replaces, leaving the document as it was", async () => {
    const id = (await write((db) => db.insert("items", item))).value as string;
    const e1 = await violation(async (db) => {
      await db.patch(id, { name: "changed" });
      await db.patch(id, { price: null as any });
    });
    expect(e1.path).toBe("items.price");
    const e2 = await violation((db) => db.patch(id, { name: undefined }));
    expect(e2.path).toBe("items.name");
    const e3 = await violation((db) => db.replace(id, { name: "only a name" } as any));
    expect(e3.path).toBe("items.price");
    await violation((db) => db.insert("items", { ...item, _secret: 1 } as any));
    // Values the validators accept but JSON storage would silently change.
    for (const [doc, path] of [
      [{ ...item, price: Infinity }, "items.price"],
      [{ ...item, price: -Infinity }, "items.price"],
      [{ ...item, data: { when: new Date() } }, "items.data.when"],
      [{ ...item, data: [1, undefined] }, "items.data[1]"],
      [{ ...item, data: { n: [Number.NaN] } }, "items.data.n[0]"],
      [{ ...item, data: 10n }, "items.data"],
    ] as const) {
      const e = await violation((db) => db.insert("items", doc as any));
      expect(e.path).toBe(path);
    }
    await violation((db) => db.insert("items", null as any));
    const after = ((await backend.runQuery("t:items", {})).value as { _id: string; name: string }[]).find(
      (d) => d._id === id,
    );
    expect(after?.name).toBe("pen");
    // Plain JSON-like values in an `any` field are fine, and a nested undefined field is dropped.
    const ok = (
      await write((db) =>
        db.insert("items", { ...item, data: { a: [1, "x", null, { b: true }], c: undefined } }),
      )
    ).value as string;
    const stored = ((await backend.runQuery("t:items", {})).value as { _id: string; data: unknown }[]).find(
      (d) => d._id === ok,
    );
    expect(stored?.data).toEqual({ a: [1, "x", null, { b: true }] });
  });
});

describe("schema declaration", () => {
  it("refuses reserved or unknown names", () => {
    expect(() => defineTable({ a: v.string() }).index("by_id", ["a"])).toThrow(/reserved/);
    expect(() => defineTable({ a: v.string() }).index("_x", ["a"])).toThrow(/reserved/);
    expect(() => defineTable({ a: v.string() }).index("i", ["a"]).index("i", ["a"])).toThrow(/Duplicate/);
    expect(() => defineTable({ a: v.string() }).index("i", ["b" as "a"])).toThrow(/unknown field/);
    expect(() => defineSchema({ "bad-name": defineTable({}) })).toThrow(/Invalid table name/);
    expect(() => defineSchema({ t: defineTable({ _x: v.string() }) })).toThrow(/may not start/);
  });

  it("compiles entity definitions with edges to tables, fields and indexes", () => {
    const s = defineEntSchema({
      user: defineEnt({ name: v.string() }).edges("sessions", { to: "session", ref: "userId" }),
      session: defineEnt({ token: v.string() }).edge("user").index("by_token", ["token"]),
    });
    expect(Object.keys(s.tables.session.fields)).toEqual(["token", "userId"]);
    expect(s.tables.session.fields.userId).toMatchObject({ kind: "id", tableName: "user" });
    expect(s.tables.session.indexes).toEqual([
      { name: "userId", fields: ["userId"] },
      { name: "by_token", fields: ["token"] },
    ]);
    expect(s.edges).toEqual([
      { from: "user", name: "sessions", to: "session", cardinality: "many", field: "userId" },
      { from: "session", name: "user", to: "user", cardinality: "one", field: "userId" },
    ]);
    expect(() => defineEntSchema({ a: defineEnt({}).edge("missing") })).toThrow(/unknown table/);
  });
});
