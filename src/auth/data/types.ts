/**
 * The shapes of the auth data layer: stored documents, model triggers, what the data functions are
 * configured with, and the arguments of each operation.
 */
import type { DataModelOf, DocOf, MutationCtx, QueryCtx, SchemaDefinition } from "service-auth/server";
import type { SortBy, WhereClause } from "../where/index.ts";

/** A stored document of some auth table. */
export type StoredDoc = Record<string, unknown> & { _id: string; _creationTime: number };

/**
 * Callbacks around the writes of one model, run inside the same mutation as the write: a throw
 * aborts the whole auth operation and nothing of it remains.
 *
 * @example
 * ```ts
 * import type { ModelTriggers } from "service-auth/auth";
 *
 * const sessionTriggers: ModelTriggers = {
 *   onCreate: async (ctx, session) => {
 *     await ctx.db.insert("logins", { userId: session.userId, at: Date.now() });
 *   },
 * };
 * ```
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

/**
 * Triggers per model, typed by the application's schema.
 *
 * @example
 * ```ts
 * import { type AuthTriggers, bindAuthData } from "service-auth/auth";
 *
 * const triggers: AuthTriggers<typeof schema> = {
 *   user: {
 *     onCreate: async (ctx, user) => {
 *       await ctx.db.insert("profiles", { userId: user._id, bio: "" });
 *     },
 *   },
 * };
 * export const authData = bindAuthData({ authFunctions, schema, triggers });
 * ```
 */
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
export interface IncrementArgs {
  model: string;
  where: WhereClause[];
  /** Signed deltas per numeric field. */
  increment: Record<string, number>;
  /** Values assigned in the same write. */
  set?: Record<string, unknown>;
}
export interface DeleteArgs {
  model: string;
  where: WhereClause[];
}

/** The ctx of a query or a mutation: reads always, writes only in a mutation. */
export type AnyCtx = QueryCtx<any> | MutationCtx<any>;
