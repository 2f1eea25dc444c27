/**
 * The auth tables of SPEC §2.1–2.5 in both declaration styles of SPEC §9.2: plain tables
 * (`authTables`) and entity definitions with edges (`authEnts`). Timestamps are numbers (ms since
 * epoch); Better Auth's `Date`s are converted by the adapters.
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
import { type PropertyValidators, v } from "service-auth/values";

/** Names of the auth tables (Better Auth's default model names). */
export const AUTH_TABLE_NAMES = ["user", "session", "account", "verification", "jwks"] as const;
export type AuthTableName = (typeof AUTH_TABLE_NAMES)[number];

/** Fields whose value must be unique in their table; writes that would repeat one fail with `CONFLICT`. */
export const AUTH_UNIQUE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  user: ["email"],
  session: ["token"],
};

/** SPEC §2.1, including the admin fields. */
export const userFields = {
  name: v.string(),
  email: v.string(),
  emailVerified: v.boolean(),
  image: v.optional(v.string()),
  createdAt: v.number(),
  updatedAt: v.number(),
  role: v.optional(v.string()),
  banned: v.optional(v.boolean()),
  banReason: v.optional(v.string()),
  banExpires: v.optional(v.number()),
};

/** SPEC §2.2 without `userId` (the entity style adds it as an edge). */
const sessionOwnFields = {
  token: v.string(),
  expiresAt: v.number(),
  createdAt: v.number(),
  updatedAt: v.number(),
  ipAddress: v.optional(v.string()),
  userAgent: v.optional(v.string()),
  impersonatedBy: v.optional(v.string()),
  activeOrganizationId: v.optional(v.string()),
};

/** SPEC §2.2, including `impersonatedBy` (admin) and `activeOrganizationId`. */
export const sessionFields = { ...sessionOwnFields, userId: v.id("user") };

/** SPEC §2.3 without `userId`. */
const accountOwnFields = {
  accountId: v.string(),
  providerId: v.string(),
  accessToken: v.optional(v.string()),
  refreshToken: v.optional(v.string()),
  idToken: v.optional(v.string()),
  accessTokenExpiresAt: v.optional(v.number()),
  refreshTokenExpiresAt: v.optional(v.number()),
  scope: v.optional(v.string()),
  password: v.optional(v.string()),
  createdAt: v.number(),
  updatedAt: v.number(),
};

/** SPEC §2.3. */
export const accountFields = { ...accountOwnFields, userId: v.id("user") };

/** SPEC §2.4. */
export const verificationFields = {
  identifier: v.string(),
  value: v.string(),
  expiresAt: v.number(),
  createdAt: v.optional(v.number()),
  updatedAt: v.optional(v.number()),
};

/** SPEC §2.5. */
export const jwksFields = {
  publicKey: v.string(),
  privateKey: v.string(),
  createdAt: v.number(),
};

/** The auth tables, plain style (SPEC §9.2). Spread them into `defineSchema`. */
export const authTables = {
  user: defineTable(userFields).index("email", ["email"]),
  session: defineTable(sessionFields).index("token", ["token"]).index("userId", ["userId"]),
  account: defineTable(accountFields).index("accountId", ["accountId"]).index("userId", ["userId"]),
  verification: defineTable(verificationFields).index("identifier", ["identifier"]),
  jwks: defineTable(jwksFields),
};

/** The auth tables, entity style (SPEC §9.2): `user` has edges `sessions`/`accounts`, they have `user`. */
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

/** A schema of only the auth tables (plain style). */
export const authSchema = defineSchema(authTables);
/** A schema of only the auth tables (entity style); compiles to the same tables plus edges. */
export const authEntSchema = defineEntSchema(authEnts);

/** What an application adds to one auth table: fields and indexes (index name → fields). */
export interface AuthTableExtension {
  fields?: PropertyValidators;
  indexes?: Record<string, readonly string[]>;
}

type Extensions = Partial<Record<AuthTableName, AuthTableExtension>>;
type FieldsOf<X> = X extends { fields: infer F extends PropertyValidators } ? F : {};
type IndexesOf<X> = X extends { indexes: infer I extends Record<string, readonly string[]> }
  ? { [K in keyof I]: [...I[K]] }
  : {};
type Extended<T, X> =
  T extends TableDefinition<infer F, infer I> ? TableDefinition<F & FieldsOf<X>, I & IndexesOf<X>> : never;

/** The plain auth tables with an application's extensions applied. */
export type ExtendedAuthTables<E extends Extensions> = {
  [K in AuthTableName]: Extended<(typeof authTables)[K], E[K]>;
};

function applyExtension<T extends TableDefinition<any, any>>(
  table: T,
  ext: AuthTableExtension | undefined,
): T {
  if (!ext) return table;
  let out: TableDefinition<any, any> = ext.fields ? table.extend(ext.fields) : table;
  for (const [name, fields] of Object.entries(ext.indexes ?? {})) out = out.index(name, [...fields] as any);
  return out as T;
}

/**
 * The auth tables with application fields and indexes added, e.g.
 * `defineAuthTables({ user: { fields: { username: v.optional(v.string()) }, indexes: { username: ["username"] } } })`.
 * Field types flow into `ctx.db` and the triggers.
 */
export function defineAuthTables<const E extends Extensions = {}>(extensions?: E): ExtendedAuthTables<E> {
  const out: Record<string, TableDefinition<any, any>> = {};
  for (const name of AUTH_TABLE_NAMES) out[name] = applyExtension(authTables[name], extensions?.[name]);
  return out as ExtendedAuthTables<E>;
}

/** The entity-style auth definitions with application fields and indexes added. */
export function defineAuthEnts(extensions?: Extensions): typeof authEnts {
  const out: Record<string, any> = {};
  for (const name of AUTH_TABLE_NAMES) {
    let ent: any = authEnts[name];
    const ext = extensions?.[name];
    if (ext?.fields) {
      // An entity keeps its edges; only its table gains fields.
      ent = Object.assign(Object.create(Object.getPrototypeOf(ent)), ent, {
        table: ent.table.extend(ext.fields),
      });
    }
    for (const [index, fields] of Object.entries(ext?.indexes ?? {})) ent = ent.index(index, [...fields]);
    out[name] = ent;
  }
  return out as typeof authEnts;
}
