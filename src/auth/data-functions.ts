/**
 * The auth data layer: create / find / count / update / delete on the auth tables, with model
 * triggers and unique fields, written once as plain functions over a function ctx. The direct
 * adapter calls them with the caller's ctx (same transaction); `createApi` wraps them as the
 * internal functions the HTTP adapter calls through `runQuery` / `runMutation` (SPEC §4.2).
 *
 * Documents here are stored documents: `_id`, numbers for timestamps, schema field names. The
 * adapters translate to and from Better Auth's shapes.
 */
import {
  type DataModelOf,
  type DocOf,
  type FunctionBuilders,
  type FunctionReference,
  functionsFor,
  type MutationCtx,
  type QueryCtx,
  type RegisteredFunction,
  type SchemaDefinition,
  ServiceError,
  ValidationError,
} from "service-auth/server";
import { type PropertyValidators, type Validator, v, validate } from "service-auth/values";
import { AUTH_TABLE_NAMES, AUTH_UNIQUE_FIELDS, authTableInfo } from "./schema.ts";
import {
  countDocs,
  findDocs,
  findFirst,
  type SortBy,
  type TableShape,
  WHERE_MODES,
  WHERE_OPERATORS,
  type WhereClause,
} from "./where.ts";

/** A stored document of some auth table. */
export type StoredDoc = Record<string, unknown> & { _id: string; _creationTime: number };

/**
 * Callbacks around the writes of one model, run inside the same mutation as the write: a throw
 * aborts the whole auth operation and nothing of it remains.
 */
export interface ModelTriggers<Doc = StoredDoc, Ctx = MutationCtx<any>> {
  /** Before insert; a returned object replaces the data to store. */
  beforeCreate?: (ctx: Ctx, data: Omit<Doc, "_id" | "_creationTime">) => unknown;
  /** After insert, with the stored document. */
  onCreate?: (ctx: Ctx, doc: Doc) => unknown;
  /** Before patch; a returned object replaces the update. */
  beforeUpdate?: (ctx: Ctx, doc: Doc, update: Partial<Doc>) => unknown;
  onUpdate?: (ctx: Ctx, newDoc: Doc, oldDoc: Doc) => unknown;
  beforeDelete?: (ctx: Ctx, doc: Doc) => unknown;
  onDelete?: (ctx: Ctx, doc: Doc) => unknown;
}

/** Triggers per model, typed by the application's schema. */
export type AuthTriggers<S extends SchemaDefinition = SchemaDefinition> = {
  [T in keyof S["tables"] & string]?: ModelTriggers<DocOf<S, T>, MutationCtx<DataModelOf<S>>>;
};

/** What the data functions need to know: the schema, triggers and unique fields. */
export interface DataConfig {
  schema: SchemaDefinition;
  triggers?: AuthTriggers<any>;
  /**
   * Fields that must be unique per model; default: what `defineAuthTables` recorded (Better Auth's
   * `unique` fields), else `user.email` and `session.token`.
   */
  uniqueFields?: Readonly<Record<string, readonly string[]>>;
  /** Models the functions may touch; default: the auth tables present in the schema. */
  models?: readonly string[];
}

/** Per schema: the tables made by `defineAuthTables` / `defineAuthEnts` or named like SPEC §2's. */
const authModelsCache = new WeakMap<SchemaDefinition, readonly string[]>();

export interface CreateArgs {
  model: string;
  data: Record<string, unknown>;
  select?: string[];
}
export interface FindOneArgs {
  model: string;
  where: WhereClause[];
  select?: string[];
}
export interface FindManyArgs {
  model: string;
  where?: WhereClause[];
  sortBy?: SortBy;
  limit?: number;
  offset?: number;
  select?: string[];
}
export interface CountArgs {
  model: string;
  where?: WhereClause[];
}
export interface UpdateArgs {
  model: string;
  where: WhereClause[];
  update: Record<string, unknown>;
}
export interface DeleteArgs {
  model: string;
  where: WhereClause[];
}

type AnyCtx = QueryCtx<any> | MutationCtx<any>;

// ------------------------------------------------------------------------------------ helpers

function modelsOf(config: DataConfig): readonly string[] {
  if (config.models) return config.models;
  let models = authModelsCache.get(config.schema);
  if (!models) {
    models = Object.entries(config.schema.tables)
      .filter(
        ([name, table]) => authTableInfo(table) || (AUTH_TABLE_NAMES as readonly string[]).includes(name),
      )
      .map(([name]) => name);
    authModelsCache.set(config.schema, models);
  }
  return models;
}

/** The table of `model`, or a typed error naming the model and the fix for one the auth layer may not touch. */
function shapeOf(config: DataConfig, model: unknown): TableShape {
  const table = typeof model === "string" ? config.schema.tables[model] : undefined;
  if (!table || !modelsOf(config).includes(model as string)) {
    const name = String(model).slice(0, 64);
    const why = table
      ? `the schema's "${name}" table was not made by defineAuthTables / defineAuthEnts (or marked with markAuthTable)`
      : `the schema has no "${name}" table`;
    throw new ServiceError(
      "BAD_REQUEST",
      `Unknown auth model "${name}": ${why}. Declare the auth tables with defineAuthTables(authOptions) using the same plugins and options as betterAuth, or write them with \`npm run cli -- auth generate\`.`,
      { data: { model: name } },
    );
  }
  return table;
}

/** True when `ctx` can write; a query ctx has a read-only `db`. */
export function isWriteCtx(ctx: AnyCtx): ctx is MutationCtx<any> {
  return typeof (ctx.db as Partial<MutationCtx["db"]>).insert === "function";
}

function requireWriter(ctx: AnyCtx, action: string, model: string): MutationCtx<any> {
  if (!isWriteCtx(ctx)) {
    throw new ServiceError(
      "READ_ONLY",
      `Better Auth tried to ${action} "${model}" in a query, which cannot write. Call it from a mutation, or use createAuth(ctx) in an action or HTTP route.`,
    );
  }
  return ctx;
}

function acceptsNull(validator: Validator): boolean {
  if (validator.kind === "null" || validator.kind === "any") return true;
  if (validator.kind === "union") return (validator.members as Validator[]).some(acceptsNull);
  return false;
}

/**
 * Better Auth writes `null` for "no value" (e.g. `banReason: null` on unban); fields that cannot
 * hold null lose the value instead. `undefined` in an update removes the field (patch semantics).
 */
function withoutNulls(
  shape: TableShape,
  data: Record<string, unknown>,
  forUpdate: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    if (key === "_id" || key === "_creationTime") continue; // the database owns these
    const validator = (shape.fields as PropertyValidators)[key];
    if (value === null && validator && !acceptsNull(validator)) {
      if (forUpdate) out[key] = undefined;
      continue;
    }
    if (value === undefined && !forUpdate) continue;
    out[key] = value;
  }
  return out;
}

function project(doc: StoredDoc | null, select: readonly string[] | undefined): StoredDoc | null {
  if (!doc || !select?.length) return doc;
  const out: Record<string, unknown> = {};
  for (const field of select) if (field in doc) out[field] = doc[field];
  return out as StoredDoc;
}

/** Refuses a write that would give a unique field a value another document of `model` has. */
async function checkUnique(
  ctx: MutationCtx<any>,
  config: DataConfig,
  model: string,
  shape: TableShape,
  values: Record<string, unknown>,
  selfId?: string,
): Promise<void> {
  const unique = config.uniqueFields
    ? (config.uniqueFields[model] ?? [])
    : (authTableInfo(config.schema.tables[model])?.unique ?? AUTH_UNIQUE_FIELDS[model] ?? []);
  for (const field of unique) {
    const value = values[field];
    if (value === undefined || value === null) continue;
    const other = await findFirst(ctx.db, model, shape, [{ field, value: value as string, operator: "eq" }]);
    if (other && other._id !== selfId) {
      throw new ServiceError("CONFLICT", `A ${model} with this ${field} already exists`, {
        data: { model, field },
      });
    }
  }
}

function triggersOf(config: DataConfig, model: string): ModelTriggers<StoredDoc, MutationCtx<any>> {
  return ((config.triggers as Record<string, ModelTriggers> | undefined)?.[model] ?? {}) as ModelTriggers;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ------------------------------------------------------------------------------------ operations

/** Inserts a document (beforeCreate → unique check → insert → onCreate) and returns it. */
export async function dbCreate(ctx: AnyCtx, config: DataConfig, args: CreateArgs): Promise<StoredDoc> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "create", args.model);
  if (!isObject(args.data)) throw new ServiceError("BAD_REQUEST", "create: data must be an object");
  const triggers = triggersOf(config, args.model);
  let data = withoutNulls(shape, args.data, false);
  if (triggers.beforeCreate) {
    const replaced = await triggers.beforeCreate(writer, data as any);
    if (replaced !== undefined && replaced !== null) {
      if (!isObject(replaced))
        throw new ServiceError(
          "BAD_REQUEST",
          `beforeCreate of "${args.model}" must return an object or nothing`,
        );
      data = withoutNulls(shape, replaced, false);
    }
  }
  await checkUnique(writer, config, args.model, shape, data);
  const id = await writer.db.insert(args.model, data as any);
  const doc = (await writer.db.get(args.model, id)) as StoredDoc;
  if (triggers.onCreate) await triggers.onCreate(writer, doc);
  return project(doc, args.select)!;
}

/** The first matching document, or null. */
export async function dbFindOne(
  ctx: AnyCtx,
  config: DataConfig,
  args: FindOneArgs,
): Promise<StoredDoc | null> {
  const shape = shapeOf(config, args.model);
  return project(await findFirst(ctx.db, args.model, shape, args.where), args.select);
}

/** Matching documents, sorted and windowed. */
export async function dbFindMany(ctx: AnyCtx, config: DataConfig, args: FindManyArgs): Promise<StoredDoc[]> {
  const shape = shapeOf(config, args.model);
  const docs = await findDocs(ctx.db, args.model, shape, args);
  return args.select?.length ? docs.map((d) => project(d, args.select)!) : docs;
}

/** The number of matching documents; index-only when an index answers the where exactly. */
export async function dbCount(ctx: AnyCtx, config: DataConfig, args: CountArgs): Promise<number> {
  const shape = shapeOf(config, args.model);
  return countDocs(ctx.db, args.model, shape, args.where);
}

async function updateDoc(
  ctx: MutationCtx<any>,
  config: DataConfig,
  model: string,
  shape: TableShape,
  doc: StoredDoc,
  update: Record<string, unknown>,
): Promise<StoredDoc> {
  const triggers = triggersOf(config, model);
  let patch = withoutNulls(shape, update, true);
  if (triggers.beforeUpdate) {
    const replaced = await triggers.beforeUpdate(ctx, doc, patch as any);
    if (replaced !== undefined && replaced !== null) {
      if (!isObject(replaced))
        throw new ServiceError("BAD_REQUEST", `beforeUpdate of "${model}" must return an object or nothing`);
      patch = withoutNulls(shape, replaced, true);
    }
  }
  await checkUnique(ctx, config, model, shape, patch, doc._id);
  await ctx.db.patch(model, doc._id, patch as any);
  const next = (await ctx.db.get(model, doc._id)) as StoredDoc;
  if (triggers.onUpdate) await triggers.onUpdate(ctx, next, doc);
  return next;
}

function checkUpdate(update: unknown): asserts update is Record<string, unknown> {
  if (!isObject(update)) throw new ServiceError("BAD_REQUEST", "update must be an object");
}

/** Updates the first matching document; returns it updated, or null when none matched. */
export async function dbUpdateOne(
  ctx: AnyCtx,
  config: DataConfig,
  args: UpdateArgs,
): Promise<StoredDoc | null> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "update", args.model);
  checkUpdate(args.update);
  const doc = await findFirst(writer.db, args.model, shape, args.where);
  return doc ? updateDoc(writer, config, args.model, shape, doc, args.update) : null;
}

/** Updates every matching document; returns how many. */
export async function dbUpdateMany(ctx: AnyCtx, config: DataConfig, args: UpdateArgs): Promise<number> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "update", args.model);
  checkUpdate(args.update);
  const docs = await findDocs(writer.db, args.model, shape, { where: args.where });
  for (const doc of docs) await updateDoc(writer, config, args.model, shape, doc, args.update);
  return docs.length;
}

async function deleteDoc(
  ctx: MutationCtx<any>,
  config: DataConfig,
  model: string,
  doc: StoredDoc,
): Promise<void> {
  const triggers = triggersOf(config, model);
  if (triggers.beforeDelete) await triggers.beforeDelete(ctx, doc);
  await ctx.db.delete(model, doc._id);
  if (triggers.onDelete) await triggers.onDelete(ctx, doc);
}

/** Deletes the first matching document; nothing matching is not an error. */
export async function dbDeleteOne(ctx: AnyCtx, config: DataConfig, args: DeleteArgs): Promise<null> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "delete", args.model);
  const doc = await findFirst(writer.db, args.model, shape, args.where);
  if (doc) await deleteDoc(writer, config, args.model, doc);
  return null;
}

/** Deletes every matching document; returns how many. */
export async function dbDeleteMany(ctx: AnyCtx, config: DataConfig, args: DeleteArgs): Promise<number> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "delete", args.model);
  const docs = await findDocs(writer.db, args.model, shape, { where: args.where });
  for (const doc of docs) await deleteDoc(writer, config, args.model, doc);
  return docs.length;
}

// ------------------------------------------------------------------------------------ validators

const whereValue = v.union(
  v.string(),
  v.number(),
  v.boolean(),
  v.null(),
  v.array(v.string()),
  v.array(v.number()),
);
const whereClause = v.object({
  field: v.string(),
  value: whereValue,
  operator: v.optional(v.union(...WHERE_OPERATORS.map((op) => v.literal(op)))),
  connector: v.optional(v.union(v.literal("AND"), v.literal("OR"))),
  mode: v.optional(v.union(...WHERE_MODES.map((mode) => v.literal(mode)))),
});
const sortByValidator = v.object({
  field: v.string(),
  direction: v.union(v.literal("asc"), v.literal("desc")),
});

/** `field` that may also be null (Better Auth's "no value"), optional when `optional`. */
function nullable(validator: Validator, optional: boolean): Validator {
  const base = { ...validator, isOptional: false } as Validator;
  const widened = acceptsNull(base) ? base : v.union(base, v.null());
  return optional ? (v.optional(widened) as Validator) : widened;
}

/** Per-model validators of create data and update values (Better Auth's nulls allowed). */
function modelValidators(shape: TableShape) {
  const create: PropertyValidators = {};
  const update: PropertyValidators = {};
  for (const [field, validator] of Object.entries(shape.fields as PropertyValidators)) {
    create[field] = validator.isOptional ? nullable(validator, true) : validator;
    update[field] = nullable(validator, true);
  }
  return { create: v.object(create), update: v.object(update) };
}

interface ArgValidators {
  create: PropertyValidators;
  findOne: PropertyValidators;
  findMany: PropertyValidators;
  count: PropertyValidators;
  update: PropertyValidators;
  remove: PropertyValidators;
}

function argValidators(skipValidation: boolean): ArgValidators {
  if (skipValidation) {
    const loose = {
      model: v.string(),
      data: v.optional(v.any()),
      where: v.optional(v.any()),
      update: v.optional(v.any()),
    };
    const rest = {
      select: v.optional(v.any()),
      sortBy: v.optional(v.any()),
      limit: v.optional(v.any()),
      offset: v.optional(v.any()),
    };
    const all = { ...loose, ...rest };
    return { create: all, findOne: all, findMany: all, count: all, update: all, remove: all };
  }
  // The model and its data are checked by `shapeOf` and `checkModelArgs`, which name the model and
  // the field; a union over every model's validator would only say "object | object | …".
  const model = v.string();
  const data = v.record(v.any());
  const select = v.optional(v.array(v.string()));
  const where = v.array(whereClause);
  return {
    create: { model, data, select },
    findOne: { model, where, select },
    findMany: {
      model,
      where: v.optional(where),
      sortBy: v.optional(sortByValidator),
      limit: v.optional(v.number()),
      offset: v.optional(v.number()),
      select,
    },
    count: { model, where: v.optional(where) },
    update: { model, where, update: data },
    remove: { model, where },
  };
}

/** Validates `data`/`update` against exactly its model; errors name the model and the field. */
function checkModelArgs(config: DataConfig, args: { model: string; data?: unknown; update?: unknown }): void {
  let shape: TableShape;
  try {
    shape = shapeOf(config, args.model);
  } catch (e) {
    // Through the functions the model is an argument like any other.
    if (!(e instanceof ServiceError)) throw e;
    throw new ValidationError("INVALID_ARGUMENTS", "args.model", "an auth model of the schema", e.message);
  }
  const validators = modelValidatorsOf(shape);
  try {
    if (args.data !== undefined) validate(validators.create, args.data, "args.data");
    if (args.update !== undefined) validate(validators.update, args.update, "args.update");
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    throw new ValidationError(
      "INVALID_ARGUMENTS",
      e.path,
      e.expected,
      `Auth model "${args.model}": ${e.message}`,
    );
  }
}

const validatorCache = new WeakMap<TableShape, ReturnType<typeof modelValidators>>();
/** A table's validators, built once (they are checked on every auth write). */
function modelValidatorsOf(shape: TableShape) {
  let validators = validatorCache.get(shape);
  if (!validators) validatorCache.set(shape, (validators = modelValidators(shape)));
  return validators;
}

// ------------------------------------------------------------------------------------ createApi

type MutationBuilder<S extends SchemaDefinition> = FunctionBuilders<DataModelOf<S>>["internalMutation"];

export interface CreateApiOptions<S extends SchemaDefinition = SchemaDefinition> {
  /**
   * The mutation builder to use, e.g. the application's `customMutation` wrapper so auth writes
   * run application-level triggers. Default: the platform's plain `internalMutation`.
   */
  internalMutation?: MutationBuilder<S>;
  /** true: args checked loosely (`v.any()`), smaller validators; false (default): per-model validators. */
  skipValidation?: boolean;
  /** Model triggers, run in the same transaction as the auth write. */
  triggers?: AuthTriggers<S>;
  /** Unique fields per model (default `user.email`, `session.token`). */
  uniqueFields?: Readonly<Record<string, readonly string[]>>;
  /** Models the functions may touch (default: the auth tables present in the schema). */
  models?: readonly string[];
}

/** The internal data functions of {@link createApi}. */
export type AuthApi = {
  create: RegisteredFunction<"mutation", "internal", CreateArgs, StoredDoc>;
  findOne: RegisteredFunction<"query", "internal", FindOneArgs, StoredDoc | null>;
  findMany: RegisteredFunction<"query", "internal", FindManyArgs, StoredDoc[]>;
  count: RegisteredFunction<"query", "internal", CountArgs, number>;
  updateOne: RegisteredFunction<"mutation", "internal", UpdateArgs, StoredDoc | null>;
  updateMany: RegisteredFunction<"mutation", "internal", UpdateArgs, number>;
  deleteOne: RegisteredFunction<"mutation", "internal", DeleteArgs, null>;
  deleteMany: RegisteredFunction<"mutation", "internal", DeleteArgs, number>;
};

/**
 * References to the data functions, as the HTTP adapter calls them: the `internal.<module>` of
 * the module exporting {@link createApi}'s functions (e.g. `internal.auth`).
 */
export interface AuthFunctions {
  create: FunctionReference<"mutation", any, CreateArgs, any>;
  findOne: FunctionReference<"query", any, FindOneArgs, any>;
  findMany: FunctionReference<"query", any, FindManyArgs, any>;
  count: FunctionReference<"query", any, CountArgs, any>;
  updateOne: FunctionReference<"mutation", any, UpdateArgs, any>;
  updateMany: FunctionReference<"mutation", any, UpdateArgs, any>;
  deleteOne: FunctionReference<"mutation", any, DeleteArgs, any>;
  deleteMany: FunctionReference<"mutation", any, DeleteArgs, any>;
}

/**
 * The auth data functions of SPEC §4.2 as internal functions of `schema`: export them from a
 * module (e.g. `auth`) and give `internal.auth` to the HTTP adapter.
 */
export function createApi<S extends SchemaDefinition>(schema: S, options: CreateApiOptions<S> = {}): AuthApi {
  const builders = functionsFor(schema);
  const mutation = (options.internalMutation ??
    builders.internalMutation) as FunctionBuilders<any>["internalMutation"];
  const query = builders.internalQuery as FunctionBuilders<any>["internalQuery"];
  const config: DataConfig = {
    schema,
    triggers: options.triggers,
    uniqueFields: options.uniqueFields,
    models: options.models,
  };
  const skip = options.skipValidation ?? false;
  const args = argValidators(skip);
  const checked = <A extends { model: string; data?: unknown; update?: unknown }>(a: A): A => {
    if (!skip) checkModelArgs(config, a);
    return a;
  };
  return {
    create: mutation({ args: args.create, handler: (ctx, a: any) => dbCreate(ctx, config, checked(a)) }),
    findOne: query({ args: args.findOne, handler: (ctx, a: any) => dbFindOne(ctx, config, checked(a)) }),
    findMany: query({ args: args.findMany, handler: (ctx, a: any) => dbFindMany(ctx, config, checked(a)) }),
    count: query({ args: args.count, handler: (ctx, a: any) => dbCount(ctx, config, checked(a)) }),
    updateOne: mutation({
      args: args.update,
      handler: (ctx, a: any) => dbUpdateOne(ctx, config, checked(a)),
    }),
    updateMany: mutation({
      args: args.update,
      handler: (ctx, a: any) => dbUpdateMany(ctx, config, checked(a)),
    }),
    deleteOne: mutation({
      args: args.remove,
      handler: (ctx, a: any) => dbDeleteOne(ctx, config, checked(a)),
    }),
    deleteMany: mutation({
      args: args.remove,
      handler: (ctx, a: any) => dbDeleteMany(ctx, config, checked(a)),
    }),
  } as unknown as AuthApi;
}
