/**
 * The auth tables in both declaration styles of requirements §9.2 (plain tables, entities with edges):
 * - requirements §2.1–2.5's tables (`authTables`, `authEnts`, and `defineAuthTables()` without options);
 * - or, given the Better Auth options, every table Better Auth describes for them, core and
 *   plugins alike (`defineAuthTables(authOptions, extensions)`, derived in schema/table-specs.ts).
 * Each table made here is recorded with its model and unique fields for the data functions.
 * Timestamps are numbers (ms since epoch); Better Auth's `Date`s are converted by the adapters.
 *
 * Step 2 of authentication reads the session and its user by primary key (`db.get`), so it needs
 * no index beyond the ones below; every Better Auth lookup (email, token, userId, accountId,
 * identifier) has its index.
 */
import {
  defineEnt,
  defineEntSchema,
  defineSchema,
  defineTable,
  type TableDefinition,
} from "service-auth/server";
import type { PropertyValidators } from "service-auth/values";
import {
  AUTH_TABLE_NAMES,
  AUTH_UNIQUE_FIELDS,
  type AuthTableName,
  accountFields,
  accountOwnFields,
  jwksFields,
  sessionFields,
  sessionOwnFields,
  userFields,
  verificationFields,
} from "./fields.ts";
import { type AuthSchemaOptions, type AuthTableSpec, authTableSpecs } from "./table-specs.ts";
import type { AuthTablesFor } from "./table-types.ts";

export type { AuthTableName } from "./fields.ts";
export {
  AUTH_TABLE_NAMES,
  AUTH_UNIQUE_FIELDS,
  accountFields,
  jwksFields,
  sessionCoreFields,
  sessionFields,
  userCoreFields,
  userFields,
  verificationFields,
} from "./fields.ts";
export type { AuthSchemaOptions } from "./table-specs.ts";
export type { AuthTablesFor } from "./table-types.ts";

/**
 * The auth tables, plain style (requirements §9.2). Spread them into `defineSchema`.
 *
 * @example
 * ```ts
 * import { authTables } from "service-auth/auth";
 * import { defineSchema, defineTable, v } from "service-auth/server";
 *
 * export default defineSchema({
 *   ...authTables,
 *   messages: defineTable({ body: v.string(), userId: v.id("user") }),
 * });
 * ```
 */
export const authTables = {
  user: defineTable(userFields).index("email", ["email"]),
  session: defineTable(sessionFields).index("token", ["token"]).index("userId", ["userId"]),
  account: defineTable(accountFields).index("accountId", ["accountId"]).index("userId", ["userId"]),
  verification: defineTable(verificationFields).index("identifier", ["identifier"]),
  jwks: defineTable(jwksFields),
};

/**
 * The auth tables, entity style (requirements §9.2): `user` has edges `sessions`/`accounts`, they have `user`.
 *
 * @example
 * ```ts
 * import { authEnts } from "service-auth/auth";
 * import { defineEnt, defineEntSchema, v } from "service-auth/server";
 *
 * export default defineEntSchema({
 *   ...authEnts,
 *   messages: defineEnt({ body: v.string() }),
 * });
 * ```
 */
export const authEnts = {
  user: defineEnt(userFields)
    .index("email", ["email"])
    .edges("sessions", { to: "session", ref: "userId" })
    .edges("accounts", { to: "account", ref: "userId" }),
  session: defineEnt(sessionOwnFields).index("token", ["token"]).edge("user"),
  account: defineEnt(accountOwnFields).index("accountId", ["accountId"]).edge("user"),
  verification: defineEnt(verificationFields).index("identifier", ["identifier"]),
  jwks: defineEnt(jwksFields),
};

/**
 * A schema of only the auth tables (plain style).
 *
 * @example
 * ```ts
 * import { authSchema, bindAuthData } from "service-auth/auth";
 *
 * // An app with no tables of its own besides the auth tables.
 * export default authSchema;
 * export const authData = bindAuthData({ authFunctions, schema: authSchema });
 * ```
 */
export const authSchema = defineSchema(authTables);
/**
 * A schema of only the auth tables (entity style); compiles to the same tables plus edges.
 *
 * @example
 * ```ts
 * import { authEntSchema } from "service-auth/auth";
 *
 * // schema.ts of an app with only the auth tables, entity style.
 * export default authEntSchema;
 * ```
 */
export const authEntSchema = defineEntSchema(authEnts);

// ------------------------------------------------------------------------------------ registry

/**
 * What the data layer knows about a table made here: its Better Auth model and unique fields.
 *
 * @example
 * ```ts
 * import { type AuthTableInfo, markAuthTable } from "service-auth/auth";
 *
 * const info: AuthTableInfo = { model: "user", unique: ["email", "username"] };
 * const user = markAuthTable(defineTable({ email: v.string(), username: v.string() }), info);
 * ```
 */
export interface AuthTableInfo {
  model: string;
  unique: readonly string[];
}

const registry = new WeakMap<TableDefinition<any, any>, AuthTableInfo>();

/**
 * The auth model a table of the schema was made for by {@link defineAuthTables} or
 * {@link defineAuthEnts}, or undefined for any other table. The data functions accept exactly
 * these tables (plus hand-written tables named like the requirements §2 ones).
 *
 * @example
 * ```ts
 * import { authTableInfo } from "service-auth/auth";
 *
 * authTableInfo(schema.tables.user); // { model: "user", unique: ["email"] } for a table of defineAuthTables
 * authTableInfo(schema.tables.messages); // undefined: not an auth table
 * ```
 */
export function authTableInfo(table: TableDefinition<any, any> | undefined): AuthTableInfo | undefined {
  return table ? registry.get(table) : undefined;
}

/**
 * Marks `table` as the table of auth model `info.model`, with its unique fields; the generated
 * schema file (`npm run cli -- auth generate`) wraps each table in it. Returns the table.
 *
 * @example
 * ```ts
 * // As `npm run cli -- auth generate` writes each table:
 * import { markAuthTable } from "service-auth/auth";
 * import { defineTable } from "service-auth/server";
 * import { v } from "service-auth/values";
 *
 * export const authTables = {
 *   verification: markAuthTable(
 *     defineTable({ identifier: v.string(), value: v.string(), expiresAt: v.number() }).index(
 *       "identifier",
 *       ["identifier"],
 *     ),
 *     { model: "verification", unique: [] },
 *   ),
 * };
 * ```
 */
export function markAuthTable<T extends TableDefinition<any, any>>(table: T, info: AuthTableInfo): T {
  registry.set(table, { model: info.model, unique: [...info.unique] });
  return table;
}
const registered = markAuthTable;

/** requirements §2's field types per model: they win over Better Auth's description. */
const SPEC_FIELDS: Readonly<Record<AuthTableName, PropertyValidators>> = {
  user: userFields,
  session: sessionFields,
  account: accountFields,
  verification: verificationFields,
  jwks: jwksFields,
};

// ------------------------------------------------------------------------------------ extensions

/**
 * What an application adds to one auth table: fields and indexes (index name → fields).
 *
 * @example
 * ```ts
 * import { type AuthTableExtension, defineAuthTables } from "service-auth/auth";
 * import { v } from "service-auth/values";
 *
 * const user: AuthTableExtension = {
 *   fields: { username: v.optional(v.string()) },
 *   indexes: { username: ["username"] },
 * };
 * const tables = defineAuthTables({ user });
 * ```
 */
export interface AuthTableExtension {
  fields?: PropertyValidators;
  indexes?: Record<string, readonly string[]>;
}

type Extensions = Partial<Record<AuthTableName, AuthTableExtension>>;
/**
 * Extensions of any auth model the options produce (plugin tables included).
 *
 * @example
 * ```ts
 * import { type AuthExtensions, authCommand, defineAuthTables } from "service-auth/auth";
 *
 * // The same extensions for the schema and for `auth generate`.
 * const extensions = { user: { indexes: { username: ["username"] } } } satisfies AuthExtensions;
 * const tables = defineAuthTables(authSchemaOptions, extensions);
 * export const commands = { auth: authCommand(authSchemaOptions, extensions) };
 * ```
 */
export type AuthExtensions = Partial<Record<string, AuthTableExtension>>;
type FieldsOf<X> = X extends { fields: infer F extends PropertyValidators } ? F : {};
type IndexesOf<X> = X extends { indexes: infer I extends Record<string, readonly string[]> }
  ? { [K in keyof I]: [...I[K]] }
  : {};
type Extended<T, X> =
  T extends TableDefinition<infer F, infer I> ? TableDefinition<F & FieldsOf<X>, I & IndexesOf<X>> : never;

/**
 * The plain auth tables with an application's extensions applied.
 *
 * @example
 * ```ts
 * import { defineAuthTables, type ExtendedAuthTables } from "service-auth/auth";
 * import { v } from "service-auth/values";
 *
 * const extensions = { user: { fields: { username: v.optional(v.string()) } } };
 * const tables: ExtendedAuthTables<typeof extensions> = defineAuthTables(extensions);
 * ```
 */
export type ExtendedAuthTables<E extends Extensions> = {
  [K in AuthTableName]: Extended<(typeof authTables)[K], E[K]>;
};

function applyExtension(table: TableDefinition<any, any>, ext: AuthTableExtension | undefined) {
  if (!ext) return table;
  let out: TableDefinition<any, any> = ext.fields ? table.extend(ext.fields) : table;
  for (const [name, fields] of Object.entries(ext.indexes ?? {})) {
    // An extension may name an index the options already make (e.g. `username` with the plugin).
    if (out.indexes.some((i) => i.name === name)) continue;
    out = out.index(name, [...fields] as any);
  }
  return out;
}

/**
 * True for the one-argument extensions form: only core model keys holding `fields` (validators)
 * and `indexes`. Better Auth options differ: `plugins`, `rateLimit`, `additionalFields`,
 * `modelName`, or `fields` renaming to strings.
 */
function isExtensions(arg: object): arg is Extensions {
  return Object.entries(arg).every(
    ([key, value]) =>
      (AUTH_TABLE_NAMES as readonly string[]).includes(key) &&
      typeof value === "object" &&
      value !== null &&
      Object.keys(value).every((k) => k === "fields" || k === "indexes") &&
      Object.values((value as AuthTableExtension).fields ?? {}).every((f) => typeof f === "object"),
  );
}

function extensionFor(extensions: AuthExtensions | undefined, spec: AuthTableSpec) {
  return extensions?.[spec.model] ?? extensions?.[spec.table];
}

// ------------------------------------------------------------------------------------ plain style

/**
 * The auth tables, ready to spread into `defineSchema`.
 *
 * - `defineAuthTables()` / `defineAuthTables(extensions)`: the requirements §2 tables (core, admin fields,
 *   `activeOrganizationId`, jwks), e.g. with
 *   `{ user: { fields: { username: v.optional(v.string()) }, indexes: { username: ["username"] } } }`.
 * - `defineAuthTables(authOptions, extensions?)`: every table, field, index and unique field
 *   Better Auth describes for these options (core, each plugin, `additionalFields`, `rateLimit`).
 *   Pass the same plugins and `user`/`session`/… options as `betterAuth` gets; the `backend`
 *   plugin's jwks table is always included.
 *
 * Field types flow into `ctx.db` and the triggers.
 *
 * @example
 * ```ts
 * // schema.ts: the tables of the app's Better Auth options, plus an index of its own.
 * import { defineAuthTables } from "service-auth/auth";
 * import { defineSchema, defineTable, v } from "service-auth/server";
 * import { authSchemaOptions } from "./auth-options.ts";
 *
 * export default defineSchema({
 *   ...defineAuthTables(authSchemaOptions, { user: { indexes: { username: ["username"] } } }),
 *   profiles: defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]),
 * });
 * ```
 */
export function defineAuthTables<const E extends Extensions = {}>(extensions?: E): ExtendedAuthTables<E>;
export function defineAuthTables<const O extends AuthSchemaOptions, const E extends AuthExtensions = {}>(
  options: O,
  extensions?: E,
): AuthTablesFor<O, E>;
export function defineAuthTables(
  first?: AuthSchemaOptions | Extensions,
  extensions?: AuthExtensions,
): Record<string, TableDefinition<any, any>> {
  const out: Record<string, TableDefinition<any, any>> = {};
  if (first === undefined || (extensions === undefined && isExtensions(first))) {
    const ext = first as Extensions | undefined;
    for (const name of AUTH_TABLE_NAMES) {
      const unique = AUTH_UNIQUE_FIELDS[name] ?? [];
      out[name] = registered(applyExtension(authTables[name], ext?.[name]), { model: name, unique });
    }
    return out;
  }
  for (const spec of authTableSpecs(first as AuthSchemaOptions, SPEC_FIELDS)) {
    let table: TableDefinition<any, any> = defineTable(spec.fields);
    for (const [name, fields] of Object.entries(spec.indexes)) table = table.index(name, fields as any);
    table = applyExtension(table, extensionFor(extensions, spec));
    out[spec.table] = registered(table, { model: spec.model, unique: spec.unique });
  }
  return out;
}

// ------------------------------------------------------------------------------------ entity style

/** An entity definition (the platform exports no name for its type). */
type EntDefinition<_F = any, _I = any> = ReturnType<typeof defineEnt<any>>;
/** Entity definitions whose tables have the types of `T`'s tables. */
type EntsOf<T> = { [K in keyof T]: Omit<EntDefinition, "table"> & { readonly table: T[K] } };

/**
 * The entity-style auth definitions (requirements §9.2), in the same two forms as
 * {@link defineAuthTables}. A field referencing another table's id becomes an edge: `session.user`
 * and its inverse `user.sessions` (the referencing table's name plus "s"); a second reference to
 * the same table stays a plain id field.
 *
 * @example
 * ```ts
 * import { defineAuthEnts } from "service-auth/auth";
 * import { defineEnt, defineEntSchema, v } from "service-auth/server";
 * import { authSchemaOptions } from "./auth-options.ts";
 *
 * export default defineEntSchema({
 *   ...defineAuthEnts(authSchemaOptions),
 *   profiles: defineEnt({ bio: v.string() }).edge("user"),
 * });
 * ```
 */
export function defineAuthEnts(extensions?: Extensions): typeof authEnts;
export function defineAuthEnts<const O extends AuthSchemaOptions, const E extends AuthExtensions = {}>(
  options: O,
  extensions?: E,
): EntsOf<AuthTablesFor<O, E>>;
export function defineAuthEnts(
  first?: AuthSchemaOptions | Extensions,
  extensions?: AuthExtensions,
): Record<string, EntDefinition<any, any>> {
  if (first === undefined || (extensions === undefined && isExtensions(first))) {
    return coreEnts(first as Extensions | undefined);
  }
  const specs = authTableSpecs(first as AuthSchemaOptions, SPEC_FIELDS);
  const inverse = new Map<string, { name: string; from: string; field: string }[]>();
  const edgeFields = new Map<string, Map<string, string>>();
  for (const spec of specs) {
    const own = new Map<string, string>();
    for (const [field, to] of Object.entries(spec.references)) {
      if ([...own.values()].includes(to)) continue; // one edge per target table
      own.set(field, to);
      const list = inverse.get(to) ?? [];
      if (!list.some((e) => e.name === `${spec.table}s`))
        list.push({ name: `${spec.table}s`, from: spec.table, field });
      inverse.set(to, list);
    }
    edgeFields.set(spec.table, own);
  }
  const out: Record<string, EntDefinition<any, any>> = {};
  for (const spec of specs) {
    const own = edgeFields.get(spec.table)!;
    const plain = Object.fromEntries(Object.entries(spec.fields).filter(([f]) => !own.has(f)));
    let ent: EntDefinition<any, any> = defineEnt(plain);
    for (const [name, fields] of Object.entries(spec.indexes)) {
      if (!own.has(name)) ent = ent.index(name, fields as any);
    }
    // `edge` adds the id field and its index, named after the field.
    for (const [field, to] of own) ent = ent.edge(to, { field });
    for (const e of inverse.get(spec.table) ?? []) ent = ent.edges(e.name, { to: e.from, ref: e.field });
    ent = extendEnt(ent, extensionFor(extensions, spec));
    registered(ent.table, { model: spec.model, unique: spec.unique });
    out[spec.table] = ent;
  }
  return out;
}

function extendEnt(ent: EntDefinition<any, any>, ext: AuthTableExtension | undefined) {
  let out = ent;
  if (ext?.fields) {
    // An entity keeps its edges; only its table gains fields.
    out = Object.assign(Object.create(Object.getPrototypeOf(out)), out, {
      table: out.table.extend(ext.fields),
    });
  }
  for (const [index, fields] of Object.entries(ext?.indexes ?? {})) {
    if (!out.table.indexes.some((i) => i.name === index)) out = out.index(index, [...fields] as any);
  }
  return out;
}

function coreEnts(extensions: Extensions | undefined): typeof authEnts {
  const out: Record<string, EntDefinition<any, any>> = {};
  for (const name of AUTH_TABLE_NAMES) {
    const ent = extendEnt(authEnts[name], extensions?.[name]);
    registered(ent.table, { model: name, unique: AUTH_UNIQUE_FIELDS[name] ?? [] });
    out[name] = ent;
  }
  return out as typeof authEnts;
}
