/**
 * Schema declaration: tables of validated documents with named indexes.
 *
 * Every document also has the system fields `_id` and `_creationTime`; every index implicitly
 * ends with `_creationTime` and `_id`, so index order is total and stable.
 */
import type { Id, ObjectType, PropertyValidators, Validator } from "./values/validators.ts";
import { v } from "./values/validators.ts";

export interface IndexDefinition {
  name: string;
  fields: string[];
}

/**
 * A table: its field validators and indexes. Build it with {@link defineTable}.
 *
 * @example
 * ```ts
 * import { defineTable, type TableDefinition, v } from "service-auth/server";
 *
 * const profiles = defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]);
 * function fieldNames(table: TableDefinition): string[] {
 *   return Object.keys(table.fields);
 * }
 * fieldNames(profiles); // ["userId", "bio"]
 * ```
 */
export class TableDefinition<
  F extends PropertyValidators = PropertyValidators,
  I extends Record<string, string[]> = {},
> {
  readonly fields: F;
  readonly indexes: IndexDefinition[];
  declare readonly _indexes: I;
  constructor(fields: F, indexes: IndexDefinition[] = []) {
    this.fields = fields;
    this.indexes = indexes;
  }
  /** Declares an index over `fields` (a real SQL index); `withIndex(name, …)` reads use it. */
  index<N extends string, const K extends (keyof F & string)[]>(
    name: N,
    fields: K,
  ): TableDefinition<F, I & Record<N, K>> {
    if (name === "by_id" || name === "by_creation_time" || name.startsWith("_")) {
      throw new Error(`Index name "${name}" is reserved`);
    }
    if (this.indexes.some((i) => i.name === name)) throw new Error(`Duplicate index "${name}"`);
    for (const f of fields) {
      if (!(f in this.fields)) throw new Error(`Index "${name}" names unknown field "${f}"`);
    }
    return new TableDefinition(this.fields, [...this.indexes, { name, fields: [...fields] }]);
  }
  /** The same table with more fields (how applications extend the auth tables). */
  extend<G extends PropertyValidators>(fields: G): TableDefinition<F & G, I> {
    return new TableDefinition({ ...this.fields, ...fields } as F & G, this.indexes) as any;
  }
}

/**
 * Declares a table from a map of field validators.
 *
 * @example
 * ```ts
 * import { defineSchema, defineTable, v } from "service-auth/server";
 *
 * export default defineSchema({
 *   counters: defineTable({ name: v.string(), value: v.number() }).index("name", ["name"]),
 *   messages: defineTable({ body: v.string(), author: v.string(), userId: v.id("user") }),
 * });
 * ```
 */
export function defineTable<F extends PropertyValidators>(fields: F): TableDefinition<F, {}> {
  return new TableDefinition(fields);
}

export type SchemaTables = Record<string, TableDefinition<any, any>>;

/**
 * A validated set of tables. Build it with {@link defineSchema}.
 *
 * @example
 * ```ts
 * import type { SchemaDefinition } from "service-auth/server";
 * import schema from "./schema.ts";
 *
 * function tableNames(s: SchemaDefinition): string[] {
 *   return Object.keys(s.tables);
 * }
 * tableNames(schema); // ["counters", "messages", …]
 * ```
 */
export interface SchemaDefinition<T extends SchemaTables = SchemaTables> {
  readonly tables: T;
  /** Edges between tables, from the entity style of declaration (metadata for readers). */
  readonly edges: EdgeDefinition[];
}

/**
 * An edge between two tables of an entity-style schema ({@link defineEntSchema}): which table
 * holds the id field, and whether it points to one document or is the inverse, many side.
 *
 * @example
 * ```ts
 * import type { EdgeDefinition } from "service-auth/server";
 *
 * // defineEnt({ … }).edge("user") on `posts` records:
 * const edge: EdgeDefinition = { from: "posts", name: "user", to: "user", cardinality: "one", field: "userId" };
 * ```
 */
export interface EdgeDefinition {
  from: string;
  name: string;
  to: string;
  /** `one`: the `from` document holds `field`; `many`: documents of `to` hold `field`. */
  cardinality: "one" | "many";
  field: string;
}

/**
 * Declares the application's schema.
 *
 * @example
 * ```ts
 * import { defineSchema, defineTable, v } from "service-auth/server";
 *
 * export default defineSchema({
 *   profiles: defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]),
 *   messages: defineTable({ body: v.string(), userId: v.id("user") }),
 * });
 * ```
 */
export function defineSchema<T extends SchemaTables>(tables: T): SchemaDefinition<T> {
  for (const name of Object.keys(tables)) {
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name)) throw new Error(`Invalid table name "${name}"`);
    for (const field of Object.keys(tables[name].fields)) {
      if (field.startsWith("_")) throw new Error(`Field "${name}.${field}" may not start with "_"`);
    }
  }
  return { tables, edges: [] };
}

/** System fields present on every stored document. */
export type SystemFields<T extends string> = { _id: Id<T>; _creationTime: number };

/**
 * The stored document type of table `T` in schema `S`.
 *
 * @example
 * ```ts
 * import type { DocOf } from "service-auth/server";
 * import type schema from "./schema.ts";
 *
 * type Message = DocOf<typeof schema, "messages">; // fields plus _id and _creationTime
 * const preview = (m: Message) => `${m.author}: ${m.body.slice(0, 40)}`;
 * ```
 */
export type DocOf<S extends SchemaDefinition, T extends keyof S["tables"] & string> = ObjectType<
  S["tables"][T]["fields"]
> &
  SystemFields<T>;

/**
 * The shape the typed database API works against.
 *
 * @example
 * ```ts
 * import { type DataModelOf, type QueryCtx } from "service-auth/server";
 * import schema from "./schema.ts";
 *
 * export type DataModel = DataModelOf<typeof schema>;
 * async function latest(ctx: QueryCtx<DataModel>) {
 *   return ctx.db.query("messages").order("desc").first();
 * }
 * ```
 */
export type DataModelOf<S extends SchemaDefinition> = {
  [T in keyof S["tables"] & string]: {
    document: DocOf<S, T>;
    fields: S["tables"][T]["fields"];
    indexes: S["tables"][T]["_indexes"] & {
      by_creation_time: ["_creationTime"];
      by_id: ["_id"];
    };
  };
};

/**
 * A data model with no static knowledge (used by untyped code paths).
 *
 * @example
 * ```ts
 * import type { DatabaseReader, GenericDataModel } from "service-auth/server";
 *
 * // Code that works with any app's tables (no static knowledge of them):
 * async function exists<DM extends GenericDataModel>(db: DatabaseReader<DM>, id: string): Promise<boolean> {
 *   return (await db.get(id)) !== null;
 * }
 * ```
 */
export type GenericDataModel = Record<
  string,
  {
    document: Record<string, any> & { _id: string; _creationTime: number };
    fields: any;
    indexes: Record<string, string[]>;
  }
>;

// ---------------------------------------------------------------------------------------------
// Entity style (requirements §9.2): the same tables declared with edges. `edge("user")` adds the field
// `userId` holding the id and an index `userId`; `edges("sessions", { ref: "userId" })` is the
// inverse (one-to-many) side.

/** An entity definition: a table plus its edges. Build it with {@link defineEnt}. */
export class EntDefinition<
  F extends PropertyValidators = PropertyValidators,
  I extends Record<string, string[]> = {},
> {
  readonly table: TableDefinition<F, I>;
  readonly edgeDecls: { name: string; to: string; cardinality: "one" | "many"; field: string }[];
  constructor(table: TableDefinition<F, I>, edgeDecls: EntDefinition["edgeDecls"] = []) {
    this.table = table;
    this.edgeDecls = edgeDecls;
  }
  index<N extends string, const K extends (keyof F & string)[]>(name: N, fields: K) {
    return new EntDefinition(this.table.index(name, fields), this.edgeDecls);
  }
  /** This entity references one `to` document through the field `${to}Id` (indexed). */
  edge<T extends string>(to: T, options?: { field?: string }) {
    const field = options?.field ?? `${to}Id`;
    const table = new TableDefinition({ ...this.table.fields, [field]: v.id(to) }, this.table.indexes).index(
      field as any,
      [field] as any,
    );
    return new EntDefinition(
      table as unknown as TableDefinition<
        F & Record<`${T}Id`, ReturnType<typeof v.id<T>>>,
        I & Record<`${T}Id`, [`${T}Id`]>
      >,
      [...this.edgeDecls, { name: to, to, cardinality: "one", field }],
    );
  }
  /** Many `to` documents reference this entity through their field `ref`. */
  edges(name: string, options: { to: string; ref: string }) {
    return new EntDefinition(this.table, [
      ...this.edgeDecls,
      { name, to: options.to, cardinality: "many", field: options.ref },
    ]);
  }
}

/**
 * Declares an entity (a table in the entity style of {@link defineEntSchema}) from a map of
 * field validators; chain `.edge(...)`, `.edges(...)` and `.index(...)`.
 *
 * @example
 * ```ts
 * import { defineEnt, defineEntSchema, v } from "service-auth/server";
 *
 * export default defineEntSchema({
 *   user: defineEnt({ name: v.string() }).edges("posts", { to: "posts", ref: "userId" }),
 *   posts: defineEnt({ title: v.string() }).edge("user"), // adds `userId` and its index
 * });
 * ```
 */
export function defineEnt<F extends PropertyValidators>(fields: F): EntDefinition<F, {}> {
  return new EntDefinition(new TableDefinition(fields));
}

/**
 * Declares a schema from entity definitions; it compiles to plain tables plus edge metadata.
 *
 * @example
 * ```ts
 * import { defineEnt, defineEntSchema, v } from "service-auth/server";
 *
 * export default defineEntSchema({
 *   user: defineEnt({ name: v.string() }).edges("posts", { to: "posts", ref: "userId" }),
 *   posts: defineEnt({ title: v.string() }).edge("user"),
 * });
 * ```
 */
export function defineEntSchema<E extends Record<string, EntDefinition<any, any>>>(
  ents: E,
): SchemaDefinition<{ [K in keyof E]: E[K]["table"] }> {
  const tables = Object.fromEntries(Object.entries(ents).map(([k, e]) => [k, e.table])) as any;
  const schema = defineSchema(tables);
  const edges: EdgeDefinition[] = [];
  for (const [from, ent] of Object.entries(ents)) {
    for (const e of ent.edgeDecls) {
      if (!(e.to in ents)) throw new Error(`Edge "${from}.${e.name}" points to unknown table "${e.to}"`);
      edges.push({ from, name: e.name, to: e.to, cardinality: e.cardinality, field: e.field });
    }
  }
  return { tables: schema.tables, edges } as any;
}

/** The validator of a whole document of `table` (fields only, without system fields). */
export function documentValidator(table: TableDefinition): Validator {
  return v.object(table.fields);
}
