/**
 * Scans without index keys (`keys: false`, used by `unique()`): the same documents as a keyed
 * scan, and the same recorded read range as before, also when `unique()` finds two documents.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileRange } from "../../src/backend/db/query.ts";
import { emptyReadSet } from "../../src/backend/db/read-write-sets.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import type { ScanRequest } from "../../src/backend/storage/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { startTestBackend } from "../helpers/service.ts";

const schema = defineSchema({
  people: defineTable({ name: v.string(), city: v.string() }).index("by_city", ["city"]),
});
const { query, mutation } = functionsFor();
const modules = {
  people: {
    add: mutation({
      args: { name: v.string(), city: v.string() },
      handler: (ctx, doc) => ctx.db.insert("people", doc),
    }),
    uniqueIn: query({
      args: { city: v.string() },
      handler: (ctx, { city }) =>
        ctx.db
          .query("people")
          .withIndex("by_city", (q) => q.eq("city", city))
          .unique(),
    }),
    takeTwo: query({
      args: { city: v.string() },
      handler: (ctx, { city }) =>
        ctx.db
          .query("people")
          .withIndex("by_city", (q) => q.eq("city", city))
          .take(2),
    }),
  },
};

let backend: BackendRuntime;
beforeAll(async () => {
  backend = await startTestBackend({ schema, modules });
  for (const [name, city] of [
    ["ann", "oslo"],
    ["bob", "paris"],
    ["cid", "paris"],
    ["dan", "paris"],
    ["eve", "rome"],
  ]) {
    await backend.runMutation("people:add", { name, city });
  }
});
afterAll(() => backend.close());

const cityRange = (city: string) =>
  compileRange("by_city", backend.catalog.table("people").indexes.get("by_city") as string[], [
    { kind: "eq", field: "city", value: city },
  ]);

describe("scans without keys", () => {
  it("return the documents of a keyed scan, in order, without keys", async () => {
    for (const order of ["asc", "desc"] as const) {
      const request: ScanRequest<true> = {
        table: "people",
        index: "by_city",
        range: cityRange("paris"),
        order,
        limit: 10,
      };
      const [keyed, bare] = await backend.engine.read(async (tx) => [
        await tx.scan(request),
        await tx.scan({ ...request, keys: false }),
      ]);
      expect(keyed.map((r) => r.doc.name)).toEqual(
        order === "asc" ? ["bob", "cid", "dan"] : ["dan", "cid", "bob"],
      );
      expect(keyed.every((r) => Buffer.isBuffer(r.key))).toBe(true);
      expect(bare.map((r) => r.doc)).toEqual(keyed.map((r) => r.doc));
      expect(bare.every((r) => r.key === undefined)).toBe(true);
    }
  });

  it("unique() records the whole range when it finds one document", async () => {
    const { value, readSet } = await backend.runQuery("people:uniqueIn", { city: "oslo" });
    expect((value as { name: string }).name).toBe("ann");
    expect(readSet.ranges).toEqual([{ table: "people", index: "by_city", range: cityRange("oslo") }]);
  });

  it("unique() over two documents fails and records the range up to the second, as take(2) does", async () => {
    const into = emptyReadSet();
    await expect(backend.runQuery("people:uniqueIn", { city: "paris" }, {}, into)).rejects.toMatchObject({
      code: "CONFLICT",
    });
    const taken = await backend.runQuery("people:takeTwo", { city: "paris" });
    expect((taken.value as { name: string }[]).map((d) => d.name)).toEqual(["bob", "cid"]);
    expect(into.ranges).toEqual(taken.readSet.ranges);
    // The range stops right after the second document: the third one ("dan") is outside it.
    const range = into.ranges[0].range;
    expect(range.upper).toBeDefined();
    expect(Buffer.compare(range.upper as Buffer, cityRange("paris").upper as Buffer)).toBeLessThan(0);
  });
});
