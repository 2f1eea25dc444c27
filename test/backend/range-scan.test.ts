/**
 * `readRange` (db/range-scan.ts), the batched index read behind every `db.query(…)` method: on
 * SQLite, whose scans answer at once, it returns its result without a promise; given the same
 * scans as promises (as PostgreSQL's are) it returns a promise of exactly the same result. Both
 * are checked against the documents filtered and sorted in memory, over several batches, with and
 * without keys, filters and a cursor, and with the same read set recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileRange } from "../../src/backend/db/query.ts";
import { readRange } from "../../src/backend/db/range-scan.ts";
import { emptyReadSet } from "../../src/backend/db/read-write-sets.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import type { ReadTransaction, StoredDocument } from "../../src/backend/storage/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { startTestBackend } from "../helpers/service.ts";

const schema = defineSchema({
  items: defineTable({ group: v.string(), n: v.number() }).index("by_group_n", ["group", "n"]),
});
const { internalMutation } = functionsFor();
const modules = {
  items: {
    seed: internalMutation({
      args: {},
      handler: async (ctx) => {
        // More than two batches (256 rows each) in group "a"; one document in "b".
        for (let n = 0; n < 600; n++) await ctx.db.insert("items", { group: "a", n });
        await ctx.db.insert("items", { group: "b", n: 0 });
      },
    }),
  },
};

type Item = StoredDocument & { group: string; n: number };

let backend: BackendRuntime;
beforeAll(async () => {
  backend = await startTestBackend({ schema, modules });
  await backend.runMutation("items:seed", {}, { allowInternal: true });
}, 60_000);
afterAll(() => backend.close());

const groupRange = (group: string) =>
  compileRange("by_group_n", ["group", "n"], [{ kind: "eq", field: "group", value: group }]);

/** The same transaction, its scans answered as promises. */
const asPromises = (tx: ReadTransaction): ReadTransaction => ({
  get: (table, id) => tx.get(table, id),
  scan: async (request) => tx.scan(request),
  count: (table, index, range) => tx.count(table, index, range),
});

// `done`: the range ended within what was read (the last batch came back short and was all read).
const cases = [
  { name: "unique-style: limit 2 without keys, range ends", group: "b", limit: 2, keys: false, done: true },
  {
    name: "limit 2 without keys, range goes on (keys read again)",
    group: "a",
    limit: 2,
    keys: false,
    done: false,
  },
  { name: "first", group: "a", limit: 1, keys: true, done: false },
  { name: "take 300 (two batches)", group: "a", limit: 300, keys: true, done: false },
  { name: "collect (three batches)", group: "a", limit: Number.POSITIVE_INFINITY, keys: true, done: true },
  {
    name: "collect descending",
    group: "a",
    limit: Number.POSITIVE_INFINITY,
    keys: true,
    desc: true,
    done: true,
  },
  {
    name: "filtered take (limit reached mid-batch)",
    group: "a",
    limit: 50,
    keys: true,
    odd: true,
    done: false,
  },
  { name: "after a cursor", group: "a", limit: 10, keys: true, cursorAt: 299, done: false },
  {
    name: "after a cursor, descending",
    group: "a",
    limit: 10,
    keys: true,
    cursorAt: 299,
    desc: true,
    done: false,
  },
];

describe("readRange", () => {
  for (const c of cases) {
    it(`${c.name}: a value on SQLite, a promise of the same over promised scans`, async () => {
      const order = c.desc ? ("desc" as const) : ("asc" as const);
      const matches = c.odd ? (doc: Item) => doc.n % 2 === 1 : undefined;
      const [sync, async] = await backend.engine.read(async (tx) => {
        // The cursor: the key of the document at `cursorAt`, as a keyed read returns it.
        let after: Buffer | undefined;
        if (c.cursorAt !== undefined) {
          const upTo = readRange<Item>(tx, emptyReadSet(), {
            table: "items",
            index: "by_group_n",
            range: groupRange(c.group),
            order,
            matches: undefined,
            limit: c.desc ? 600 - c.cursorAt : c.cursorAt + 1,
            keys: true,
          });
          if (upTo instanceof Promise) throw new Error("SQLite's read should be a value");
          after = upTo.lastKey;
        }
        const options = {
          table: "items",
          index: "by_group_n",
          range: groupRange(c.group),
          order,
          matches,
          limit: c.limit,
          after,
          keys: c.keys,
        };
        const syncReads = emptyReadSet();
        const direct = readRange<Item>(tx, syncReads, options);
        const asyncReads = emptyReadSet();
        const promised = readRange<Item>(asPromises(tx), asyncReads, options);
        if (direct instanceof Promise) throw new Error("SQLite's read should be a value, not a promise");
        expect(promised).toBeInstanceOf(Promise);
        return [
          { read: direct, readSet: syncReads },
          { read: await promised, readSet: asyncReads },
        ];
      });
      expect(async).toEqual(sync);

      // Against the documents filtered and sorted in memory.
      let expected = Array.from({ length: c.group === "a" ? 600 : 1 }, (_, n) => n);
      if (c.desc) expected.reverse();
      if (c.cursorAt !== undefined) expected = expected.slice(expected.indexOf(c.cursorAt) + 1);
      if (c.odd) expected = expected.filter((n) => n % 2 === 1);
      expected = expected.slice(0, c.limit);
      const { read, readSet } = sync;
      expect(read.docs.map((d) => d.n)).toEqual(expected);
      expect(read.done).toBe(c.done);
      expect(readSet.ranges).toHaveLength(1);
    });
  }
});
