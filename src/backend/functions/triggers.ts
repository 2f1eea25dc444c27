/**
 * Application-level triggers: callbacks that run on every write to a table, in the same
 * transaction as the write. They apply to mutations built with a wrapped builder:
 *
 *   const triggers = new Triggers<DataModel>();
 *   triggers.register("user", async (ctx, change) => { ... });
 *   export const internalMutation = customMutation(rawInternalMutation, triggers.wrap);
 *
 * Writes made by a trigger through `ctx.db` fire triggers too.
 */
import type { DatabaseWriter } from "../db/database.ts";
import type { GenericDataModel } from "../schema.ts";
import type { MutationCtx } from "./define.ts";

/**
 * One write a trigger is told about: the operation, the document's id, and the document before
 * (`oldDoc`, null on insert) and after (`newDoc`, null on delete).
 *
 * @example
 * ```ts
 * triggers.register("user", async (ctx, change) => {
 *   if (change.operation === "update" && change.oldDoc?.email !== change.newDoc?.email) {
 *     console.log(`user ${change.id}: email changed to ${change.newDoc?.email}`);
 *   }
 * });
 * ```
 */
export interface Change<Doc> {
  operation: "insert" | "update" | "delete";
  id: string;
  oldDoc: Doc | null;
  newDoc: Doc | null;
}

/**
 * A callback run after every insert, update and delete of table `T`, inside the writing
 * mutation's transaction; its `ctx.db` writes fire triggers too.
 *
 * @example
 * ```ts
 * import type { Trigger } from "service-auth/server";
 * import type { DataModel } from "./functions.ts";
 *
 * const logDeletes: Trigger<DataModel, "messages"> = (_ctx, change) => {
 *   if (change.operation === "delete") console.log(`message ${change.id} deleted`);
 * };
 * triggers.register("messages", logDeletes);
 * ```
 */
export type Trigger<DM extends GenericDataModel, T extends keyof DM & string> = (
  ctx: MutationCtx<DM>,
  change: Change<DM[T]["document"]>,
) => Promise<void> | void;

/**
 * Application-level triggers: register callbacks per table, then wrap a mutation builder
 * with {@link customMutation} and `triggers.wrap` so every write made through it runs them, in
 * the same transaction.
 *
 * @example
 * ```ts
 * import { customMutation, type DataModelOf, functionsFor, Triggers } from "service-auth/server";
 * import schema from "./schema.ts";
 *
 * const raw = functionsFor(schema);
 * export const triggers = new Triggers<DataModelOf<typeof schema>>();
 * triggers.register("messages", async (ctx, change) => {
 *   if (change.operation !== "insert") return;
 *   const counter = await ctx.db.query("counters").withIndex("name", (q) => q.eq("name", "messages")).unique();
 *   if (counter) await ctx.db.patch(counter._id, { value: counter.value + 1 });
 * });
 * export const mutation = customMutation(raw.mutation, triggers.wrap);
 * ```
 */
export class Triggers<DM extends GenericDataModel = GenericDataModel> {
  private readonly byTable = new Map<string, Trigger<DM, any>[]>();

  /** Runs `trigger` after every insert, update and delete of `table`. */
  register<T extends keyof DM & string>(table: T, trigger: Trigger<DM, T>): this {
    const list = this.byTable.get(table) ?? [];
    list.push(trigger);
    this.byTable.set(table, list);
    return this;
  }

  /** A ctx whose `db` fires the registered triggers; pass to `customMutation`. */
  wrap = (ctx: MutationCtx<DM>): MutationCtx<DM> => {
    const raw = ctx.db;
    const wrapped: MutationCtx<DM> = { ...ctx };
    const fire = async (table: string, change: Change<any>) => {
      for (const trigger of this.byTable.get(table) ?? []) await trigger(wrapped, change);
    };
    const tableOf = (tableOrId: string, maybeId?: string) =>
      maybeId === undefined ? raw.tableOf(tableOrId) : tableOrId;
    const db: DatabaseWriter<any> = {
      get: ((a: string, b?: string) => (b === undefined ? raw.get(a) : raw.get(a as any, b))) as any,
      query: (table: string) => raw.query(table as any),
      tableOf: (id: string) => raw.tableOf(id),
      insert: (async (table: string, value: any) => {
        const id = await raw.insert(table as any, value);
        if (this.byTable.has(table))
          await fire(table, { operation: "insert", id, oldDoc: null, newDoc: await raw.get(id) });
        return id;
      }) as any,
      patch: (async (a: string, b: any, c?: any) => {
        const id = c === undefined ? a : b;
        const table = tableOf(a, c === undefined ? undefined : b);
        const oldDoc = table && this.byTable.has(table) ? await raw.get(id) : null;
        await (c === undefined ? raw.patch(a, b) : raw.patch(a as any, b, c));
        if (table && oldDoc)
          await fire(table, { operation: "update", id, oldDoc, newDoc: await raw.get(id) });
      }) as any,
      replace: (async (id: string, value: any) => {
        const table = raw.tableOf(id);
        const oldDoc = table && this.byTable.has(table) ? await raw.get(id) : null;
        await raw.replace(id, value);
        if (table && oldDoc)
          await fire(table, { operation: "update", id, oldDoc, newDoc: await raw.get(id) });
      }) as any,
      delete: (async (a: string, b?: string) => {
        const id = b === undefined ? a : b;
        const table = tableOf(a, b);
        const oldDoc = table && this.byTable.has(table) ? await raw.get(id) : null;
        await (b === undefined ? raw.delete(a) : raw.delete(a as any, b));
        if (table && oldDoc) await fire(table, { operation: "delete", id, oldDoc, newDoc: null });
      }) as any,
    };
    wrapped.db = db as DatabaseWriter<DM>;
    return wrapped;
  };
}
