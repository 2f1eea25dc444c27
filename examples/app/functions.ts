/**
 * Function builders typed by this app's schema. `internalMutation` is wrapped so every write it
 * makes runs the application triggers (here: the user count), in the same transaction.
 */
import { customMutation, type DataModelOf, functionsFor, Triggers } from "service-auth/server";
import schema from "./schema.ts";

export type DataModel = DataModelOf<typeof schema>;

const raw = functionsFor(schema);
export const { query, action, internalQuery, internalAction, httpAction } = raw;

export const triggers = new Triggers<DataModel>();

/** Keeps `counters.users` equal to the number of users. */
triggers.register("user", async (ctx, change) => {
  const delta = change.operation === "insert" ? 1 : change.operation === "delete" ? -1 : 0;
  if (delta === 0) return;
  const counter = await ctx.db
    .query("counters")
    .withIndex("name", (q) => q.eq("name", "users"))
    .unique();
  if (counter) await ctx.db.patch(counter._id, { value: counter.value + delta });
  else await ctx.db.insert("counters", { name: "users", value: Math.max(0, delta) });
});

export const mutation = customMutation(raw.mutation, triggers.wrap);
export const internalMutation = customMutation(raw.internalMutation, triggers.wrap);
