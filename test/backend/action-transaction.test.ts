/**
 * `ActionCtx.runInTransaction`: the queries and mutations an action runs inside it join one write
 * transaction — they see each other's writes, commit together (published once, after the commit)
 * or not at all, and a mutation failing inside fails the whole, even when the action catches it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { v } from "../../src/backend/values/validators.ts";
import { startTestBackend } from "../helpers/service.ts";

const schema = defineSchema({ notes: defineTable({ text: v.string() }).index("text", ["text"]) });
const { internalMutation, internalQuery } = functionsFor(schema);
const notes = {
  add: internalMutation({
    args: { text: v.string() },
    handler: (ctx, { text }) => ctx.db.insert("notes", { text }),
  }),
  /** Inserts, then refuses: its own insert must not survive. */
  addThenFail: internalMutation({
    args: { text: v.string() },
    handler: async (ctx, { text }) => {
      await ctx.db.insert("notes", { text });
      throw new Error("refused after writing");
    },
  }),
  /** Appends `n<count>`: two running interleaved would both read the same count. */
  appendNext: internalMutation({
    args: {},
    handler: async (ctx) => {
      const count = (await ctx.db.query("notes").collect()).length;
      await ctx.db.insert("notes", { text: `n${count}` });
      return count;
    },
  }),
  texts: internalQuery({
    args: {},
    handler: async (ctx) => (await ctx.db.query("notes").collect()).map((n) => n.text),
  }),
};

let backend: BackendRuntime;
beforeAll(async () => {
  backend = await startTestBackend({ schema, modules: { notes } });
});
afterAll(() => backend.close());

const texts = async () =>
  (await backend.runQuery("notes:texts", {}, { allowInternal: true })).value as string[];
const ctx = () => backend.actionCtx({ allowInternal: true });

describe("runInTransaction", () => {
  it("joins the mutations and queries inside: each sees the earlier writes, all commit once, together", async () => {
    const c = await ctx();
    const commits: number[] = [];
    const off = backend.onCommit((commit) => commits.push(commit.writes.length));
    const seen = await c.runInTransaction(async () => {
      await c.runMutation("notes:add" as any, { text: "a" });
      const inside = (await c.runQuery("notes:texts" as any, {})) as string[];
      // Not committed yet: a read snapshot of its own does not see it.
      const outside = (await backend.read((db) => db.query("notes").collect())).map((n) => n.text);
      await c.runMutation("notes:add" as any, { text: "b" });
      return { inside, outside, commitsInside: commits.length };
    });
    off();
    expect(seen).toEqual({ inside: ["a"], outside: [], commitsInside: 0 });
    expect(await texts()).toEqual(["a", "b"]);
    expect(commits).toEqual([2]);
  });

  it("rolls everything back when the callback throws", async () => {
    const c = await ctx();
    const before = await texts();
    await expect(
      c.runInTransaction(async () => {
        await c.runMutation("notes:add" as any, { text: "lost" });
        throw new Error("callback failed");
      }),
    ).rejects.toThrow("callback failed");
    expect(await texts()).toEqual(before);
  });

  it("a failed mutation inside fails the whole, even when the callback catches its error", async () => {
    const c = await ctx();
    const before = await texts();
    await expect(
      c.runInTransaction(async () => {
        await c.runMutation("notes:add" as any, { text: "first" });
        await c.runMutation("notes:addThenFail" as any, { text: "half" }).catch(() => "ignored");
        return "went on";
      }),
    ).rejects.toThrow("refused after writing");
    expect(await texts()).toEqual(before);
  });

  it("concurrent calls inside take turns: none interleaves with another", async () => {
    const c = await ctx();
    const before = (await texts()).length;
    const counts = await c.runInTransaction(() =>
      Promise.all([
        c.runMutation("notes:appendNext" as any, {}),
        c.runQuery("notes:texts" as any, {}).then((t) => (t as string[]).length),
        c.runMutation("notes:appendNext" as any, {}),
      ]),
    );
    expect(counts).toEqual([before, before + 1, before + 1]);
    expect((await texts()).slice(before)).toEqual([`n${before}`, `n${before + 1}`]);
  });

  it("a scope inside a scope is the same transaction", async () => {
    const c = await ctx();
    const before = await texts();
    await expect(
      c.runInTransaction(async () => {
        await c.runInTransaction(() => c.runMutation("notes:add" as any, { text: "nested" }));
        throw new Error("outer failed");
      }),
    ).rejects.toThrow("outer failed");
    expect(await texts()).toEqual(before);
  });
});
