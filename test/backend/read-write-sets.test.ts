import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { DatabaseReader as Reader, DatabaseWriter as Writer } from "../../src/backend/db/database.ts";
import { type Commit, commitTouches, type ReadSet, tablesOf } from "../../src/backend/db/read-write-sets.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { type DataModelOf, defineSchema, defineTable } from "../../src/backend/schema.ts";
import { v } from "../../src/backend/values/index.ts";
import { inlineFunctions } from "../helpers/inline-functions.ts";
import { startTestBackend } from "../helpers/service.ts";

const schema = defineSchema({
  users: defineTable({ email: v.string(), score: v.number() })
    .index("by_email", ["email"])
    .index("by_score", ["score"]),
  notes: defineTable({ text: v.string() }),
});
type DatabaseReader = Reader<DataModelOf<typeof schema>>;
type DatabaseWriter = Writer<DataModelOf<typeof schema>>;
const inline = inlineFunctions();
const modules = { t: inline.module };

let backend: BackendRuntime;
const commits: Commit[] = [];
beforeAll(async () => {
  backend = await startTestBackend({ schema, modules });
  backend.onCommit((c) => commits.push(c));
});
afterAll(() => backend.close());

/** Runs a query and returns its value and read set. */
async function readSetOf<T>(fn: (db: DatabaseReader) => Promise<T>): Promise<{ value: T; readSet: ReadSet }> {
  const { value, readSet } = await backend.runQuery("t:read", inline.register(fn));
  return { value: value as T, readSet };
}
/** Runs a mutation and returns the commit it published. */
async function commitOf(fn: (db: DatabaseWriter) => Promise<unknown>): Promise<Commit> {
  const before = commits.length;
  await backend.runMutation("t:write", inline.register(fn));
  expect(commits.length).toBe(before + 1);
  return commits[commits.length - 1];
}

let ids: Record<string, string>;
beforeEach(async () => {
  const reset = inline.register(async (db: DatabaseWriter) => {
    for (const t of ["users", "notes"] as const)
      for (const d of await db.query(t).collect()) await db.delete(d._id);
    const out: Record<string, string> = {};
    for (const [email, score] of [
      ["a", 10],
      ["c", 30],
      ["e", 50],
      ["g", 70],
    ] as const) {
      out[email] = await db.insert("users", { email, score });
    }
    out.note = await db.insert("notes", { text: "n" });
    return out;
  });
  ids = (await backend.runMutation("t:write", reset)).value as Record<string, string>;
});

const touches = (readSet: ReadSet, commit: Commit) => commitTouches(backend.catalog, readSet, commit);

describe("read sets and write sets", () => {
  it("an equality read is touched by writes of that key only", async () => {
    const { value, readSet } = await readSetOf((db) =>
      db
        .query("users")
        .withIndex("by_email", (q) => q.eq("email", "a"))
        .collect(),
    );
    expect(value).toHaveLength(1);
    expect(tablesOf(readSet)).toEqual(new Set(["users"]));
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "a", score: 1 })))).toBe(true);
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "b", score: 1 })))).toBe(
      false,
    );
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "a\0", score: 1 })))).toBe(
      false,
    );
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "", score: 1 })))).toBe(false);
    expect(touches(readSet, await commitOf((db) => db.insert("notes", { text: "a" })))).toBe(false);
    // Moving a document out of the range and into it both count.
    expect(touches(readSet, await commitOf((db) => db.patch(ids.a, { email: "z" })))).toBe(true);
    expect(touches(readSet, await commitOf((db) => db.patch(ids.c, { email: "a" })))).toBe(true);
    expect(touches(readSet, await commitOf((db) => db.patch(ids.e, { score: 99 })))).toBe(false);
    expect(touches(readSet, await commitOf((db) => db.delete(ids.g)))).toBe(false);
  });

  it("a range read is touched inside its bounds only", async () => {
    const { value, readSet } = await readSetOf((db) =>
      db
        .query("users")
        .withIndex("by_score", (q) => q.gt("score", 10).lte("score", 50))
        .collect(),
    );
    expect((value as { email: string }[]).map((d) => d.email)).toEqual(["c", "e"]);
    for (const [score, inside] of [
      [10, false],
      [10.5, true],
      [50, true],
      [50.5, false],
      [-1, false],
      [99, false],
    ] as const) {
      const commit = await commitOf((db) => db.insert("users", { email: "x", score }));
      expect(touches(readSet, commit), `score ${score}`).toBe(inside);
    }
  });

  it("take(n) is not touched by writes after the last row it read", async () => {
    const { value, readSet } = await readSetOf((db) => db.query("users").withIndex("by_score").take(2));
    expect((value as { email: string }[]).map((d) => d.email)).toEqual(["a", "c"]);
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "x", score: 40 })))).toBe(
      false,
    );
    expect(touches(readSet, await commitOf((db) => db.patch(ids.g, { email: "y" })))).toBe(false);
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "x", score: 20 })))).toBe(
      true,
    );
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "x", score: 0 })))).toBe(true);
    expect(touches(readSet, await commitOf((db) => db.patch(ids.c, { email: "cc" })))).toBe(true);
  });

  it("first() in descending order is touched by a newer document only", async () => {
    const { readSet } = await readSetOf((db) =>
      db.query("users").withIndex("by_score").order("desc").first(),
    );
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "x", score: 60 })))).toBe(
      false,
    );
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "x", score: 80 })))).toBe(
      true,
    );
  });

  it("a full read of a table is touched by any write to it and none to others", async () => {
    const { readSet } = await readSetOf((db) => db.query("users").collect());
    expect(touches(readSet, await commitOf((db) => db.insert("notes", { text: "x" })))).toBe(false);
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "q", score: 1 })))).toBe(true);
  });

  it("get(id) is touched only by writes to that id, including ids that did not exist", async () => {
    const { readSet } = await readSetOf((db) => db.get(ids.c));
    expect(readSet.ranges).toEqual([]);
    expect(touches(readSet, await commitOf((db) => db.patch(ids.e, { score: 1 })))).toBe(false);
    expect(touches(readSet, await commitOf((db) => db.insert("users", { email: "c", score: 30 })))).toBe(
      false,
    );
    expect(touches(readSet, await commitOf((db) => db.patch(ids.c, { score: 31 })))).toBe(true);
    const deleted = await readSetOf((db) => db.get(ids.note));
    expect(touches(deleted.readSet, await commitOf((db) => db.delete(ids.note)))).toBe(true);
    const missing = await readSetOf((db) => db.get(ids.note));
    expect(missing.value).toBeNull();
    expect(missing.readSet.ids).toEqual([{ table: "notes", id: ids.note }]);
  });

  it("a filtered read depends on every row it scanned", async () => {
    const { value, readSet } = await readSetOf((db) =>
      db
        .query("users")
        .withIndex("by_score")
        .filter((d) => d.email === "e")
        .first(),
    );
    expect((value as { email: string }).email).toBe("e");
    // A row before "e" could newly match the filter; one after it cannot change first().
    expect(touches(readSet, await commitOf((db) => db.patch(ids.c, { email: "e" })))).toBe(true);
    expect(touches(readSet, await commitOf((db) => db.patch(ids.g, { email: "e" })))).toBe(false);
  });

  it("onCommit delivers each mutation's exact write set, in order, and nothing for a failed one", async () => {
    const start = commits.length;
    const multi = inline.register(async (db: DatabaseWriter) => {
      const id = await db.insert("notes", { text: "1" });
      await db.patch(id, { text: "2" });
      await db.delete(ids.a);
      return id;
    });
    const { value: newId, sequence } = await backend.runMutation("t:write", multi);
    const commit = commits[start];
    expect(commits.length).toBe(start + 1);
    expect(commit.sequence).toBe(sequence);
    expect(commit.unknown).toBeFalsy();
    expect(commit.writes).toEqual([
      { table: "notes", id: newId, before: null, after: expect.objectContaining({ _id: newId, text: "1" }) },
      {
        table: "notes",
        id: newId,
        before: expect.objectContaining({ text: "1" }),
        after: expect.objectContaining({ _id: newId, text: "2" }),
      },
      { table: "users", id: ids.a, before: expect.objectContaining({ email: "a", score: 10 }), after: null },
    ]);

    const failing = inline.register(async (db: DatabaseWriter) => {
      await db.insert("notes", { text: "never" });
      throw new Error("abort");
    });
    await expect(backend.runMutation("t:write", failing)).rejects.toThrow("abort");
    const readOnly = inline.register((db: DatabaseWriter) => db.query("notes").collect());
    await backend.runMutation("t:write", readOnly);
    expect(commits.length).toBe(start + 1);

    await commitOf((db) => db.insert("notes", { text: "later" }));
    expect(commits[start + 1].sequence).toBeGreaterThan(commit.sequence);
  });
});
