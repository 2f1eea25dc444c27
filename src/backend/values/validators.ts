/**
 * Runtime validators whose static types are inferred end to end.
 *
 * A validator is plain data (`kind` + children) so the schema can be introspected (for SQL
 * migrations and for the auth integration) and serialized. `Infer<typeof validator>` gives the
 * TypeScript type of a value that passes it.
 */

/**
 * Document id of table `T`: a branded string so ids of different tables do not mix.
 *
 * @example
 * ```ts
 * import type { Id } from "service-auth/server";
 *
 * async function authorOf(ctx: QueryCtx<DataModel>, messageId: Id<"messages">) {
 *   const message = await ctx.db.get(messageId);
 *   return message ? ctx.db.get(message.userId) : null;
 * }
 * ```
 */
export type Id<T extends string> = string & { readonly __tableName: T };

interface Base<T, Optional extends boolean> {
  /** Phantom field carrying the static type; never set at runtime. */
  readonly _type?: T;
  readonly isOptional: Optional;
}

export interface VString<O extends boolean = false> extends Base<string, O> {
  readonly kind: "string";
}
export interface VNumber<O extends boolean = false> extends Base<number, O> {
  readonly kind: "number";
}
export interface VBoolean<O extends boolean = false> extends Base<boolean, O> {
  readonly kind: "boolean";
}
export interface VNull<O extends boolean = false> extends Base<null, O> {
  readonly kind: "null";
}
export interface VAny<O extends boolean = false> extends Base<any, O> {
  readonly kind: "any";
}
export interface VId<T extends string, O extends boolean = false> extends Base<Id<T>, O> {
  readonly kind: "id";
  readonly tableName: T;
}
export interface VLiteral<L extends string | number | boolean, O extends boolean = false> extends Base<L, O> {
  readonly kind: "literal";
  readonly value: L;
}
export interface VArray<E extends Validator, O extends boolean = false> extends Base<Infer<E>[], O> {
  readonly kind: "array";
  readonly element: E;
}
export interface VObject<F extends PropertyValidators, O extends boolean = false>
  extends Base<ObjectType<F>, O> {
  readonly kind: "object";
  readonly fields: F;
}
export interface VRecord<V extends Validator, O extends boolean = false>
  extends Base<Record<string, Infer<V>>, O> {
  readonly kind: "record";
  readonly value: V;
}
export interface VUnion<M extends Validator[], O extends boolean = false> extends Base<Infer<M[number]>, O> {
  readonly kind: "union";
  readonly members: M;
}

/**
 * Any validator, required or optional.
 *
 * @example
 * ```ts
 * import { describe, type Validator, v } from "service-auth/values";
 *
 * const maybeName: Validator = v.union(v.string(), v.null());
 * describe(maybeName); // "string | null"
 * ```
 */
export type Validator =
  | VString<boolean>
  | VNumber<boolean>
  | VBoolean<boolean>
  | VNull<boolean>
  | VAny<boolean>
  | VId<string, boolean>
  | VLiteral<string | number | boolean, boolean>
  | VArray<any, boolean>
  | VObject<any, boolean>
  | VRecord<any, boolean>
  | VUnion<any[], boolean>;

/**
 * A field map of validators, by field name: what `args` of a function and the fields of
 * `defineTable` / `v.object` are.
 *
 * @example
 * ```ts
 * import { type PropertyValidators, v } from "service-auth/values";
 *
 * const profileFields: PropertyValidators = { userId: v.id("user"), bio: v.string() };
 * ```
 */
export type PropertyValidators = Record<string, Validator>;

/**
 * The TypeScript type of values accepted by validator `V`.
 *
 * @example
 * ```ts
 * import { type Infer, v } from "service-auth/server";
 *
 * const messageInput = v.object({ body: v.string(), tags: v.optional(v.array(v.string())) });
 * type MessageInput = Infer<typeof messageInput>; // { body: string; tags?: string[] }
 * ```
 */
export type Infer<V> = V extends { readonly _type?: infer T } ? T : never;

type OptionalKeys<F extends PropertyValidators> = {
  [K in keyof F]: F[K]["isOptional"] extends true ? K : never;
}[keyof F];
type RequiredKeys<F extends PropertyValidators> = Exclude<keyof F, OptionalKeys<F>>;
type Expand<T> = T extends infer O ? { [K in keyof O]: O[K] } : never;

/**
 * Object type of a field map: optional validators become optional properties.
 *
 * @example
 * ```ts
 * import { type ObjectType, v } from "service-auth/values";
 *
 * const args = { body: v.string(), replyTo: v.optional(v.id("messages")) };
 * type SendArgs = ObjectType<typeof args>; // { body: string; replyTo?: Id<"messages"> }
 * ```
 */
export type ObjectType<F extends PropertyValidators> = Expand<
  { [K in RequiredKeys<F>]: Infer<F[K]> } & { [K in OptionalKeys<F>]?: Infer<F[K]> }
>;

type AsOptional<V extends Validator> =
  V extends VString<any>
    ? VString<true>
    : V extends VNumber<any>
      ? VNumber<true>
      : V extends VBoolean<any>
        ? VBoolean<true>
        : V extends VNull<any>
          ? VNull<true>
          : V extends VAny<any>
            ? VAny<true>
            : V extends VId<infer T, any>
              ? VId<T, true>
              : V extends VLiteral<infer L, any>
                ? VLiteral<L, true>
                : V extends VArray<infer E, any>
                  ? VArray<E, true>
                  : V extends VObject<infer F, any>
                    ? VObject<F, true>
                    : V extends VRecord<infer R, any>
                      ? VRecord<R, true>
                      : V extends VUnion<infer M, any>
                        ? VUnion<M, true>
                        : never;

/**
 * Validator constructors, in the style of `v.string()`.
 *
 * @example
 * ```ts
 * import { defineTable, v } from "service-auth/server";
 *
 * const messages = defineTable({
 *   body: v.string(),
 *   userId: v.id("user"),
 *   pinned: v.optional(v.boolean()),
 *   status: v.union(v.literal("sent"), v.literal("deleted")),
 * });
 * ```
 */
export const v = {
  string: (): VString => ({ kind: "string", isOptional: false }),
  number: (): VNumber => ({ kind: "number", isOptional: false }),
  boolean: (): VBoolean => ({ kind: "boolean", isOptional: false }),
  null: (): VNull => ({ kind: "null", isOptional: false }),
  any: (): VAny => ({ kind: "any", isOptional: false }),
  id: <T extends string>(tableName: T): VId<T> => ({ kind: "id", tableName, isOptional: false }),
  literal: <L extends string | number | boolean>(value: L): VLiteral<L> => ({
    kind: "literal",
    value,
    isOptional: false,
  }),
  array: <E extends Validator>(element: E): VArray<E> => ({
    kind: "array",
    element,
    isOptional: false,
  }),
  object: <F extends PropertyValidators>(fields: F): VObject<F> => ({
    kind: "object",
    fields,
    isOptional: false,
  }),
  record: <V extends Validator>(value: V): VRecord<V> => ({
    kind: "record",
    value,
    isOptional: false,
  }),
  union: <M extends Validator[]>(...members: M): VUnion<M> => ({
    kind: "union",
    members,
    isOptional: false,
  }),
  optional: <V extends Validator>(validator: V): AsOptional<V> =>
    ({ ...validator, isOptional: true }) as unknown as AsOptional<V>,
};
