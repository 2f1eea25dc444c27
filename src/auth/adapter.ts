/**
 * The two Better Auth database adapters (requirements §1.4), both made with Better Auth's own
 * `createAdapterFactory` and both running the same data operations (the table in
 * data/operations.ts; `factory` below maps Better Auth's adapter methods onto them):
 *
 * - `adapter(ctx, options)`: directly on `ctx.db`, inside the caller's transaction (queries and
 *   mutations). In a query ctx every write is refused with `READ_ONLY` before anything happens.
 * - `httpAdapter(ctx, { authFunctions })`: through `ctx.runQuery` / `ctx.runMutation` of the
 *   internal data functions (HTTP routes and actions), one transaction per call, except inside
 *   Better Auth's `adapter.transaction` (sign-up, OAuth user creation): that runs in one write
 *   transaction (`ctx.runInTransaction`) which every call joins, so a crash leaves all or nothing.
 *
 * The database generates `_id`; Better Auth sees it as `id`. Dates are stored as numbers (ms) and
 * come back as `Date`s (the jwt plugin calls `createdAt.getTime()`); a date in a where clause may
 * be a `Date`, an ISO string or ms, and compares as a date. A field without a value reads back as
 * `null`, as from a SQL database (Better Auth checks `!== null`).
 */
import type { BetterAuthOptions } from "better-auth";
import {
  type CleanedWhere,
  createAdapterFactory,
  type DBAdapter,
  type DBAdapterDebugLogOption,
} from "better-auth/adapters";
import type {
  ActionCtx,
  FunctionReference,
  MutationCtx,
  QueryCtx,
  SchemaDefinition,
} from "service-auth/server";
import type { AuthFunctions } from "./data/functions.ts";
import { type OperationCalls, operationCalls } from "./data/operations.ts";
import type { DataConfig, StoredDoc } from "./data/types.ts";
import { isWriteCtx } from "./data/writer.ts";
import type { WhereClause, WhereMode } from "./where/index.ts";

export type { AuthFunctions } from "./data/functions.ts";

type BetterAuthSchema = Record<string, { modelName: string; fields: Record<string, { fieldName?: string }> }>;

/**
 * Field names between Better Auth and storage. A field renamed in Better Auth's options (e.g.
 * `user.fields.email = "email_address"`) is stored under that name when the schema has it, and
 * under its default name otherwise, so renaming needs no schema change.
 */
class FieldNames {
  /** Per model: configured name → stored name, where they differ. */
  private readonly toStored = new Map<string, Map<string, string>>();
  /** Per model: stored name → configured name (the inverse, for documents going out). */
  private readonly toAuth = new Map<string, Map<string, string>>();
  /** Per model: default name → configured name, where they differ. */
  private readonly configured = new Map<string, Map<string, string>>();

  constructor(authSchema: BetterAuthSchema, tables: SchemaDefinition["tables"] | undefined) {
    for (const model of Object.values(authSchema)) {
      const table = tables?.[model.modelName];
      for (const [field, attributes] of Object.entries(model.fields)) {
        const name = attributes.fieldName ?? field;
        if (name === field) continue;
        mapIn(this.configured, model.modelName).set(field, name);
        if (table && !(name in table.fields) && field in table.fields) {
          mapIn(this.toStored, model.modelName).set(name, field);
          mapIn(this.toAuth, model.modelName).set(field, name);
        }
      }
    }
  }

  /** The stored name of a field as the factory names it (configured name, `_id`). */
  field(model: string, name: string): string {
    return this.toStored.get(model)?.get(name) ?? name;
  }

  /** The stored name of a field named by its default name (`select`, `sortBy`; `id` too). */
  defaultField(model: string, name: string): string {
    if (name === "id") return "_id";
    return this.field(model, this.configured.get(model)?.get(name) ?? name);
  }

  data(model: string, data: Record<string, unknown>): Record<string, unknown> {
    const renamed = this.toStored.get(model);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) out[renamed?.get(key) ?? key] = value;
    return out;
  }

  where(model: string, where: CleanedWhere[] | undefined): WhereClause[] | undefined {
    return where?.map((w) => ({
      field: this.field(model, w.field),
      operator: w.operator,
      connector: w.connector,
      // Better Auth 1.7's case sensitivity (1.4's clauses have none); only a non-default is passed on.
      ...((w as { mode?: WhereMode }).mode === "insensitive" && { mode: "insensitive" as const }),
      value: toStoredValue(w.value) as WhereClause["value"],
    }));
  }

  doc(model: string, doc: StoredDoc | null): StoredDoc | null {
    const back = this.toAuth.get(model);
    if (!doc || !back) return doc;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(doc)) out[back.get(key) ?? key] = value;
    return out as StoredDoc;
  }
}

function mapIn(maps: Map<string, Map<string, string>>, key: string): Map<string, string> {
  let map = maps.get(key);
  if (!map) maps.set(key, (map = new Map()));
  return map;
}

/** Dates inside arrays (`in` over dates) are not reached by the factory's per-value transform. */
function toStoredValue(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.map((v) => (v instanceof Date ? v.getTime() : v));
  return value;
}

/**
 * A value of a date field as stored (ms since epoch): a `Date`, an ISO string (what Better Auth's
 * callers sometimes pass in a where clause) or ms, also inside an array (`in`). Anything else
 * stays as it is and simply matches nothing.
 */
export function toStoredDate(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (typeof value === "string") {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? value : ms;
  }
  if (Array.isArray(value)) return value.map(toStoredDate);
  return value;
}

function withoutId(data: Record<string, unknown>): Record<string, unknown> {
  // A databaseHooks `before` hook may inject an id (`forceAllowId`); the database assigns ids.
  const { _id, id, ...rest } = data;
  return rest;
}

interface AdapterMeta {
  adapterId: string;
  adapterName: string;
  tables?: SchemaDefinition["tables"];
  debugLogs?: DBAdapterDebugLogOption;
  /** Exposed as `adapter.options` (e.g. whether writes are possible here). */
  info: Record<string, unknown>;
}

/** Runs a callback as one transaction (the caller's own, or a new one that calls join). */
type TransactionScope = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * The adapter over `ops`. With `inTransaction`, Better Auth's `adapter.transaction(cb)` runs `cb`
 * inside that scope, with this same adapter: its calls join the scope's transaction.
 */
function makeAdapter(
  ops: OperationCalls,
  meta: AdapterMeta,
  inTransaction?: TransactionScope,
): (options: BetterAuthOptions) => DBAdapter<BetterAuthOptions> {
  return (options) => {
    const self: DBAdapter<BetterAuthOptions> = factory(
      ops,
      meta,
      inTransaction ? (callback) => inTransaction(() => callback(self)) : false,
    )(options);
    return self;
  };
}

function factory(
  ops: OperationCalls,
  meta: AdapterMeta,
  transaction: false | (<R>(callback: (trx: DBAdapter<BetterAuthOptions>) => Promise<R>) => Promise<R>),
) {
  return createAdapterFactory({
    config: {
      adapterId: meta.adapterId,
      adapterName: meta.adapterName,
      debugLogs: meta.debugLogs ?? false,
      usePlural: false,
      // The database generates `_id` (random, with a table tag); Better Auth sees it as `id`.
      disableIdGeneration: true,
      mapKeysTransformInput: { id: "_id" },
      mapKeysTransformOutput: { _id: "id" },
      // Serial numeric ids would need a second id column; the factory refuses them with a clear error.
      supportsNumericIds: false,
      supportsJSON: false,
      supportsArrays: false,
      supportsBooleans: true,
      // Kept true so Dates reach the transforms below (false would turn them into ISO strings).
      supportsDates: true,
      transaction,
      // Runs on written values and on where values alike.
      customTransformInput: ({ data, fieldAttributes }) =>
        fieldAttributes.type === "date" ? toStoredDate(data) : data,
      customTransformOutput: ({ data, fieldAttributes }) => {
        if (data === undefined) return null;
        return typeof data === "number" && fieldAttributes.type === "date" ? new Date(data) : data;
      },
    },
    adapter: ({ schema }) => {
      const names = new FieldNames(schema as unknown as BetterAuthSchema, meta.tables);
      const select = (model: string, fields: string[] | undefined) =>
        fields?.map((f) => names.defaultField(model, f));
      return {
        create: async ({ model, data, select: fields }) =>
          names.doc(
            model,
            await ops.create({
              model,
              data: names.data(model, withoutId(data)),
              select: select(model, fields),
            }),
          ) as any,
        findOne: async ({ model, where, select: fields }) =>
          names.doc(
            model,
            await ops.findOne({
              model,
              where: names.where(model, where) ?? [],
              select: select(model, fields),
            }),
          ) as any,
        findMany: async ({ model, where, limit, sortBy, offset }) => {
          const docs = await ops.findMany({
            model,
            where: names.where(model, where),
            limit,
            offset,
            sortBy: sortBy && { field: names.defaultField(model, sortBy.field), direction: sortBy.direction },
          });
          return docs.map((d) => names.doc(model, d)) as any[];
        },
        count: ({ model, where }) => ops.count({ model, where: names.where(model, where) }),
        update: async ({ model, where, update }) =>
          names.doc(
            model,
            await ops.updateOne({
              model,
              where: names.where(model, where) ?? [],
              update: names.data(model, withoutId(update as Record<string, unknown>)),
            }),
          ) as any,
        updateMany: ({ model, where, update }) =>
          ops.updateMany({
            model,
            where: names.where(model, where) ?? [],
            update: names.data(model, withoutId(update)),
          }),
        delete: async ({ model, where }) => {
          await ops.deleteOne({ model, where: names.where(model, where) ?? [] });
        },
        deleteMany: ({ model, where }) => ops.deleteMany({ model, where: names.where(model, where) ?? [] }),
        ...atomicMethods(ops, names),
        options: meta.info,
      };
    },
  });
}

/** A where clause as Better Auth's adapter factory hands it over (1.4's `CleanedWhere`, 1.7's too). */
type FactoryWhere = CleanedWhere[] | undefined;

/**
 * Better Auth 1.7's race-safe primitives, each one data operation, so one transaction: `consumeOne`
 * deletes and returns one matching row (of parallel consumers exactly one gets it), `incrementOne`
 * adds deltas to one row matching the guard. An empty where matches nothing here: both are meant
 * for one row named by its clauses. Better Auth 1.4's factory does not call them.
 */
function atomicMethods(ops: OperationCalls, names: FieldNames) {
  return {
    consumeOne: async ({ model, where }: { model: string; where: FactoryWhere }) => {
      if (!where?.length) return null;
      return names.doc(model, await ops.consumeOne({ model, where: names.where(model, where)! })) as any;
    },
    incrementOne: async ({
      model,
      where,
      increment,
      set,
    }: {
      model: string;
      where: FactoryWhere;
      increment: Record<string, number>;
      set?: Record<string, unknown>;
    }) => {
      if (!where?.length) return null;
      return names.doc(
        model,
        await ops.incrementOne({
          model,
          where: names.where(model, where)!,
          increment: names.data(model, increment) as Record<string, number>,
          ...(set && Object.keys(set).length > 0 && { set: names.data(model, withoutId(set)) }),
        }),
      ) as any;
    },
  };
}

/** Options of the direct adapter: the schema plus the data layer's triggers and unique fields. */
export interface AdapterOptions extends DataConfig {
  debugLogs?: DBAdapterDebugLogOption;
}

/**
 * Better Auth adapter over `ctx.db`, inside the caller's transaction. Pass the result as
 * `betterAuth({ database: adapter(ctx, { schema, triggers }) })`. In a query ctx, reads work and
 * every write fails with `READ_ONLY` before touching anything.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { adapter } from "service-auth/auth";
 *
 * // In a query or mutation: Better Auth inside its transaction.
 * export const getAuth = (ctx: QueryCtx<DataModel> | MutationCtx<DataModel>) =>
 *   betterAuth({ database: adapter(ctx, { schema }), secret: ctx.env.get("SERVICE_AUTH_SECRET") });
 * ```
 */
export function adapter(ctx: QueryCtx<any> | MutationCtx<any>, options: AdapterOptions) {
  const { debugLogs, ...config } = options;
  const ops = operationCalls((_name, operation, args) => operation.run(ctx, config, args));
  return makeAdapter(
    ops,
    {
      adapterId: "service-db",
      adapterName: "Service DB (direct)",
      tables: config.schema.tables,
      debugLogs,
      info: { serviceAdapter: "direct", writable: isWriteCtx(ctx) },
    },
    // Already inside the caller's transaction: Better Auth's transaction is that one.
    (fn) => fn(),
  );
}

/** Options of the HTTP adapter. */
export interface HttpAdapterOptions {
  /** References to the data functions of `createApi`, e.g. `internal.auth`. */
  authFunctions: AuthFunctions;
  /** The schema, so renamed Better Auth fields can map to their stored names. */
  schema?: SchemaDefinition;
  debugLogs?: DBAdapterDebugLogOption;
}

/**
 * Better Auth adapter that reads with `ctx.runQuery` and writes with `ctx.runMutation` of the
 * internal data functions, for HTTP routes and actions (which have no `db`). Better Auth's
 * `adapter.transaction` runs in `ctx.runInTransaction` (when the ctx has it): one write
 * transaction that the data functions called inside join.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { type AuthFunctions, httpAdapter } from "service-auth/auth";
 * import { type ActionCtx, anyApi } from "service-auth/server";
 *
 * const authFunctions: AuthFunctions = anyApi.auth;
 *
 * // In HTTP routes and actions (no `ctx.db`): through the `auth` module's data functions.
 * export const createAuth = (ctx: ActionCtx) =>
 *   betterAuth({ database: httpAdapter(ctx, { authFunctions, schema }) });
 * ```
 */
export function httpAdapter(
  ctx: Pick<ActionCtx, "runQuery" | "runMutation"> & Partial<Pick<ActionCtx, "runInTransaction">>,
  options: HttpAdapterOptions,
) {
  const fns = options.authFunctions;
  // Each operation through the function of the same name, as the query or mutation it is.
  const ops = operationCalls((name, operation, args) =>
    operation.kind === "query"
      ? ctx.runQuery(fns[name] as FunctionReference<"query">, args)
      : ctx.runMutation(fns[name] as FunctionReference<"mutation">, args),
  );
  return makeAdapter(
    ops,
    {
      adapterId: "service-http",
      adapterName: "Service DB (HTTP)",
      tables: options.schema?.tables,
      debugLogs: options.debugLogs,
      info: { serviceAdapter: "http", writable: true },
    },
    ctx.runInTransaction && ((fn) => ctx.runInTransaction!(fn)),
  );
}
