/**
 * Compile-time checks, verified by `npx tsc --noEmit -p .` (vitest does not run this file):
 * validator inference, index field names in `withIndex`, and typed function references.
 * A `@ts-expect-error` line fails the type check when the error it expects disappears.
 */
import { expectTypeOf } from "vitest";
import { type ApiOf, anyApi, type Id, type Infer, type InternalApiOf } from "../../src/backend/server.ts";
import { v } from "../../src/backend/values/index.ts";
import type * as actions from "../fixtures/actions.ts";
import { mutation, query } from "../fixtures/functions.ts";
import type * as messages from "../fixtures/messages.ts";

// --- Infer<> of validators -----------------------------------------------------------------
expectTypeOf<Infer<ReturnType<typeof v.string>>>().toEqualTypeOf<string>();
expectTypeOf<Infer<ReturnType<typeof v.number>>>().toEqualTypeOf<number>();
expectTypeOf<Infer<ReturnType<typeof v.boolean>>>().toEqualTypeOf<boolean>();
expectTypeOf<Infer<ReturnType<typeof v.null>>>().toEqualTypeOf<null>();
const userId = v.id("users");
expectTypeOf<Infer<typeof userId>>().toEqualTypeOf<Id<"users">>();
expectTypeOf<Id<"users">>().not.toEqualTypeOf<Id<"posts">>();
const lit = v.literal("draft");
expectTypeOf<Infer<typeof lit>>().toEqualTypeOf<"draft">();
const status = v.union(v.literal("a"), v.literal("b"), v.null());
expectTypeOf<Infer<typeof status>>().toEqualTypeOf<"a" | "b" | null>();
const list = v.array(v.number());
expectTypeOf<Infer<typeof list>>().toEqualTypeOf<number[]>();
const rec = v.record(v.boolean());
expectTypeOf<Infer<typeof rec>>().toEqualTypeOf<Record<string, boolean>>();
const obj = v.object({
  name: v.string(),
  age: v.optional(v.number()),
  tags: v.array(v.string()),
  nested: v.object({ ok: v.boolean() }),
});
expectTypeOf<Infer<typeof obj>>().toEqualTypeOf<{
  name: string;
  age?: number;
  tags: string[];
  nested: { ok: boolean };
}>();

// --- withIndex field names and value types ---------------------------------------------------
export const typedQuery = query({
  args: { author: v.string() },
  handler: async (ctx, args) => {
    expectTypeOf(args).toEqualTypeOf<{ author: string }>();
    const rows = await ctx.db
      .query("messages")
      .withIndex("by_author_seq", (q) => q.eq("author", args.author).gt("seq", 1))
      .collect();
    expectTypeOf(rows[0].body).toEqualTypeOf<string>();
    expectTypeOf(rows[0]._id).toEqualTypeOf<Id<"messages">>();
    expectTypeOf(rows[0].seq).toEqualTypeOf<number | undefined>();
    // @ts-expect-error "body" is not a field of index "by_author"
    await ctx.db.query("messages").withIndex("by_author", (q) => q.eq("body", "x"));
    // @ts-expect-error the author is a string
    await ctx.db.query("messages").withIndex("by_author", (q) => q.eq("author", 1));
    // @ts-expect-error no such index
    await ctx.db.query("messages").withIndex("by_body");
    // @ts-expect-error no such table
    ctx.db.query("nope");
    return rows;
  },
});

// --- typed writes: ids carry their table ---------------------------------------------------------
export const typedMutation = mutation({
  args: {},
  handler: async (ctx) => {
    const id = await ctx.db.insert("messages", { body: "b", author: "a" });
    expectTypeOf(id).toEqualTypeOf<Id<"messages">>();
    const doc = await ctx.db.get(id);
    expectTypeOf(doc!._id).toEqualTypeOf<Id<"messages">>();
    expectTypeOf(doc!.seq).toEqualTypeOf<number | undefined>();
    // @ts-expect-error a message has no count
    doc!.count;
    await ctx.db.patch(id, { seq: 2, author: undefined });
    // @ts-expect-error seq is a number
    await ctx.db.patch(id, { seq: "2" });
    await ctx.db.replace(id, { body: "c", author: "d" });
    // @ts-expect-error replace needs every required field
    await ctx.db.replace(id, { body: "c" });
    // With an untyped id, fields of any one table are accepted.
    const untyped: string = id;
    await ctx.db.patch(untyped, { count: 1 });
    // @ts-expect-error insert checks the document type
    await ctx.db.insert("messages", { body: 1, author: "a" });
  },
});

// --- typed references --------------------------------------------------------------------------
type Modules = { messages: typeof messages; actions: typeof actions };
const api = anyApi as ApiOf<Modules>;
const internal = anyApi as InternalApiOf<Modules>;

expectTypeOf(api.messages.byAuthor._args).toEqualTypeOf<{ author: string }>();
expectTypeOf(api.messages.send._args).toEqualTypeOf<{ body: string; author?: string }>();
expectTypeOf(api.messages.send._returns).toEqualTypeOf<Id<"messages">>();
expectTypeOf(api.messages.byAuthor._returns[0].author).toEqualTypeOf<string>();
expectTypeOf(api.actions.sendAndCount._returns).toEqualTypeOf<{
  id: Id<"messages">;
  mine: string[];
  total: number;
}>();
expectTypeOf(internal.messages.greet._returns).toEqualTypeOf<string>();
// Internal functions are not on `api`, public ones are not on `internal`.
expectTypeOf(api.messages).not.toHaveProperty("purge");
expectTypeOf(internal.messages).toHaveProperty("purge");
expectTypeOf(internal.messages).not.toHaveProperty("send");
