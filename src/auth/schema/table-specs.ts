/**
 * The auth tables as Better Auth itself describes them for a set of options (`getAuthTables`: the
 * core tables, every plugin's tables and fields, `additionalFields`, the `rateLimit` table when
 * rate limits live in the database), turned into platform table descriptions: field validators,
 * indexes and unique fields. requirements §2 fixes the types of the fields it lists (so stored documents
 * stay valid); every other field's type comes from Better Auth's description.
 */
import type { BetterAuthOptions } from "better-auth";
import { type DBFieldAttribute, getAuthTables } from "better-auth/db";
import { type PropertyValidators, type Validator, v } from "service-auth/values";

/**
 * Only what `getAuthTables` reads: model and field names, plugin schemas, additional fields, rate limits.
 *
 * @example
 * ```ts
 * import { admin, twoFactor } from "better-auth/plugins";
 * import { type AuthSchemaOptions, defineAuthTables } from "service-auth/auth";
 *
 * // The same plugins and user options `betterAuth` gets.
 * const authSchemaOptions = {
 *   user: { additionalFields: { username: { type: "string", required: false, input: false } } },
 *   plugins: [admin(), twoFactor()],
 * } satisfies AuthSchemaOptions;
 * const tables = defineAuthTables(authSchemaOptions);
 * ```
 */
export type AuthSchemaOptions = Pick<
  BetterAuthOptions,
  "plugins" | "user" | "session" | "account" | "verification" | "rateLimit" | "secondaryStorage"
>;

/** One auth table in platform terms. */
export interface AuthTableSpec {
  /** Better Auth's default model name (`user`, `twoFactor`, …), as triggers and extensions name it. */
  model: string;
  /** The table's name: the configured model name (`options.user.modelName`), default `model`. */
  table: string;
  fields: PropertyValidators;
  /** Index name → fields: one per indexed, unique or referencing field, named after it. */
  indexes: Record<string, string[]>;
  /** Fields whose value must be unique in the table. */
  unique: string[];
  /** Fields holding the id of another auth table (`userId` → `user`). */
  references: Record<string, string>;
}

/**
 * Lookups Better Auth makes by fields it does not mark as indexed (`findAccountByProviderId`, the
 * rate limiter's `key`): indexed here so they never scan the table.
 */
const LOOKUP_INDEXES: Readonly<Record<string, readonly string[]>> = {
  account: ["accountId"],
  rateLimit: ["key"],
  // The housekeeping (housekeeping.ts) deletes expired rows by these ranges.
  session: ["expiresAt"],
  verification: ["expiresAt"],
};

/**
 * Fields Better Auth does not mark unique but that are: one rate-limit row per key, so instances
 * creating a client's first count at once cannot make two (the loser sees `CONFLICT`).
 */
const UNIQUE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  rateLimit: ["key"],
};

/** The jwks table the `backend` plugin (Better Auth's `jwt`) stores keys in, present whatever the options. */
const JWKS_SCHEMA = {
  jwks: {
    fields: {
      publicKey: { type: "string", required: true },
      privateKey: { type: "string", required: true },
      createdAt: { type: "date", required: true },
      expiresAt: { type: "date", required: false },
      // Better Auth 1.7's jwt plugin records them (schema/fields.ts).
      alg: { type: "string", required: false },
      crv: { type: "string", required: false },
    },
  },
} as const;

/**
 * The validator of one Better Auth field as stored: dates are numbers (ms since epoch); JSON and
 * array fields are JSON strings (the adapters declare no JSON or array support, so Better Auth
 * serializes them); a reference to another auth table's `id` is an id of that table.
 */
function validatorOf(attribute: DBFieldAttribute, referenced: string | undefined): Validator {
  const base: Validator = referenced
    ? v.id(referenced)
    : attribute.type === "boolean"
      ? v.boolean()
      : attribute.type === "number" || attribute.type === "date"
        ? v.number()
        : v.string();
  return attribute.required === false ? (v.optional(base) as Validator) : base;
}

/**
 * The auth tables for `options`, in Better Auth's order (core tables first). `specFields` gives,
 * per default model name, validators that win over the derived ones (requirements §2's field types).
 */
export function authTableSpecs(
  options: AuthSchemaOptions,
  specFields: Readonly<Record<string, PropertyValidators>> = {},
): AuthTableSpec[] {
  const plugins = [...(options.plugins ?? [])];
  if (!plugins.some((p) => p.schema && "jwks" in p.schema)) {
    plugins.push({ id: "service-auth-jwks", schema: JWKS_SCHEMA } as never);
  }
  const tables = getAuthTables({ ...options, plugins } as BetterAuthOptions);
  const tableName = (model: string) => tables[model]?.modelName ?? model;
  // A reference names its model by the configured name (`user.modelName: "users"` → "users").
  const modelOfTable = new Map(Object.entries(tables).map(([model, table]) => [table.modelName, model]));
  const referencedModel = (name: string) => (name in tables ? name : modelOfTable.get(name));
  return Object.entries(tables).map(([model, table]) => {
    const spec: AuthTableSpec = {
      model,
      table: table.modelName,
      fields: {},
      indexes: {},
      unique: [],
      references: {},
    };
    const overrides = specFields[model] ?? {};
    for (const [key, attribute] of Object.entries(table.fields)) {
      const name = attribute.fieldName ?? key;
      const ref = attribute.references;
      // Only references to a table's `id` hold platform ids; others keep their own type.
      const target = ref && ref.field === "id" ? referencedModel(ref.model) : undefined;
      const referenced = target ? tableName(target) : undefined;
      if (referenced) spec.references[name] = referenced;
      spec.fields[name] = referenced
        ? validatorOf(attribute, referenced)
        : (overrides[key] ?? validatorOf(attribute, undefined));
      if (attribute.unique) spec.unique.push(name);
      if (attribute.unique || attribute.index || referenced) spec.indexes[name] = [name];
    }
    for (const field of UNIQUE_FIELDS[model] ?? []) {
      const name = table.fields[field]?.fieldName ?? field;
      if (name in spec.fields && !spec.unique.includes(name)) spec.unique.push(name);
    }
    for (const field of LOOKUP_INDEXES[model] ?? []) {
      const name = table.fields[field]?.fieldName ?? field;
      if (name in spec.fields) spec.indexes[name] ??= [name];
    }
    return spec;
  });
}
