/**
 * The static types of {@link defineAuthTables}' options form: the same derivation as
 * `authTableSpecs` (schema/table-specs.ts), done on Better Auth's literal plugin schema types, so plugin
 * tables and fields (`twoFactor`, `user.username`, …) are typed in `ctx.db` and the triggers.
 * Reference fields are typed as strings (Better Auth types their target as `string`).
 */
import type { TableDefinition } from "service-auth/server";
import type { PropertyValidators, v } from "service-auth/values";
import type {
  accountFields,
  jwksFields,
  sessionCoreFields,
  sessionFields,
  userCoreFields,
  userFields,
  verificationFields,
} from "./fields.ts";

type VString = ReturnType<typeof v.string>;
type VNumber = ReturnType<typeof v.number>;
type VBoolean = ReturnType<typeof v.boolean>;
type Optional<V> = V extends VString
  ? ReturnType<typeof v.optional<VString>>
  : V extends VNumber
    ? ReturnType<typeof v.optional<VNumber>>
    : ReturnType<typeof v.optional<VBoolean>>;

type BaseValidator<A> = A extends { type: "boolean" }
  ? VBoolean
  : A extends { type: "number" | "date" }
    ? VNumber
    : VString;
/** A field is required unless Better Auth says `required: false` (as its migrations do). */
type FieldValidator<A> = A extends { required: false } ? Optional<BaseValidator<A>> : BaseValidator<A>;
type DerivedFields<Fs> = { -readonly [K in keyof Fs & string]: FieldValidator<Fs[K]> };
type DerivedIndexes<Fs> = {
  [K in keyof Fs & string as Fs[K] extends { index: true } | { unique: true } | { references: object }
    ? K
    : never]: [K];
};

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;
type PluginOf<O> = O extends { plugins?: infer P } ? (P extends readonly (infer Q)[] ? Q : never) : never;
type SchemaOf<P> = P extends { schema?: infer S } ? (S extends object ? S : never) : never;
type PluginSchemas<O> = [SchemaOf<PluginOf<O>>] extends [never]
  ? {}
  : UnionToIntersection<SchemaOf<PluginOf<O>>>;
type PluginFields<O, M extends string> = PluginSchemas<O> extends { [K in M]: { fields: infer F } } ? F : {};
type AdditionalFields<O, M extends string> = M extends keyof O
  ? NonNullable<O[M]> extends { additionalFields?: infer A }
    ? NonNullable<A>
    : {}
  : {};
/** Fields a plugin or the options add to a core model. */
type AddedFields<O, M extends string> = PluginFields<O, M> & AdditionalFields<O, M>;

type CoreModel = "user" | "session" | "account" | "verification" | "jwks";
/** Better Auth's core fields per model (requirements §2 types). */
interface CoreFields {
  user: typeof userCoreFields;
  session: typeof sessionCoreFields;
  account: typeof accountFields;
  verification: typeof verificationFields;
  jwks: typeof jwksFields & { expiresAt: ReturnType<typeof v.optional<VNumber>> };
}
/** requirements §2's field types: they win over the derived ones. */
interface SpecFields {
  user: typeof userFields;
  session: typeof sessionFields;
  account: typeof accountFields;
  verification: typeof verificationFields;
  jwks: typeof jwksFields;
}
interface CoreIndexes {
  user: { email: ["email"] };
  session: { token: ["token"]; userId: ["userId"] };
  account: { accountId: ["accountId"]; userId: ["userId"] };
  verification: { identifier: ["identifier"] };
  jwks: {};
}
type Overlay<D, S> = { [K in keyof D]: K extends keyof S ? S[K] : D[K] };

type ExtFields<X> = X extends { fields: infer F extends PropertyValidators } ? F : {};
type ExtIndexes<X> = X extends { indexes: infer I extends Record<string, readonly string[]> }
  ? { [K in keyof I]: [...I[K]] }
  : {};
type Ext<E, M extends string> = M extends keyof E ? E[M] : undefined;

type CoreTable<O, E, M extends CoreModel> = TableDefinition<
  Overlay<CoreFields[M] & DerivedFields<AddedFields<O, M>>, SpecFields[M]> & ExtFields<Ext<E, M>>,
  CoreIndexes[M] & DerivedIndexes<AddedFields<O, M>> & ExtIndexes<Ext<E, M>>
>;
type PluginTable<Fs, X> = TableDefinition<
  DerivedFields<Fs> & ExtFields<X>,
  DerivedIndexes<Fs> & ExtIndexes<X>
>;
type PluginModels<O> = Exclude<keyof PluginSchemas<O> & string, CoreModel>;

type RateLimitTable<O> = O extends { rateLimit?: { storage?: "database" } }
  ? NonNullable<O["rateLimit"]> extends { storage: "database" }
    ? { rateLimit: TableDefinition<{ key: VString; count: VNumber; lastRequest: VNumber }, { key: ["key"] }> }
    : {}
  : {};

/**
 * The tables `defineAuthTables(options, extensions)` returns, by Better Auth's default model names.
 *
 * @example
 * ```ts
 * import { type AuthTablesFor, defineAuthTables } from "service-auth/auth";
 *
 * type Tables = AuthTablesFor<typeof authSchemaOptions, {}>;
 * const tables: Tables = defineAuthTables(authSchemaOptions);
 * const twoFactorTable = tables.twoFactor; // a plugin's table, typed
 * ```
 */
export type AuthTablesFor<O, E> = { [M in CoreModel]: CoreTable<O, E, M> } & {
  [M in PluginModels<O>]: PluginTable<PluginSchemas<O>[M] extends { fields: infer F } ? F : {}, Ext<E, M>>;
} & RateLimitTable<O>;
