import { ValidationError } from "../errors.ts";
import { idTag, tableTag } from "../ids.ts";
import type { Validator } from "./validators.ts";

const tags = new Map<string, string>();
function tagOf(table: string): string {
  let tag = tags.get(table);
  if (!tag) tags.set(table, (tag = tableTag(table)));
  return tag;
}

/**
 * Describes a validator for error messages, e.g. `string | null`.
 *
 * @example
 * ```ts
 * import { describe, v } from "service-auth/values";
 *
 * describe(v.union(v.string(), v.null())); // "string | null"
 * describe(v.id("user")); // "id<user>"
 * ```
 */
export function describe(validator: Validator): string {
  switch (validator.kind) {
    case "id":
      return `id<${validator.tableName}>`;
    case "literal":
      return JSON.stringify(validator.value);
    case "array":
      return `array<${describe(validator.element)}>`;
    case "object":
      return "object";
    case "record":
      return `record<${describe(validator.value)}>`;
    case "union":
      return (validator.members as Validator[]).map(describe).join(" | ");
    default:
      return validator.kind;
  }
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  // "must be number, got number" would hide why a NaN was refused.
  if (Number.isNaN(value)) return "NaN";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * Returns the first mismatch of `value` against `validator` as `[path, expected]`, or null.
 * Returns instead of throwing so unions can try members cheaply.
 */
export function findMismatch(validator: Validator, value: unknown, path: string): [string, string] | null {
  if (value === undefined) return validator.isOptional ? null : [path, describe(validator)];
  switch (validator.kind) {
    case "any":
      return null;
    case "string":
      return typeof value === "string" ? null : [path, describe(validator)];
    case "id":
      // The id's tag must name this table: an id of another table (say, a user id taken from a
      // JWT passed where a message id is expected) never reaches `db.delete`.
      return typeof value === "string" && idTag(value) === tagOf(validator.tableName)
        ? null
        : [path, describe(validator)];
    case "number":
      return typeof value === "number" && !Number.isNaN(value) ? null : [path, "number"];
    case "boolean":
      return typeof value === "boolean" ? null : [path, "boolean"];
    case "null":
      return value === null ? null : [path, "null"];
    case "literal":
      return value === validator.value ? null : [path, describe(validator)];
    case "array": {
      if (!Array.isArray(value)) return [path, describe(validator)];
      for (let i = 0; i < value.length; i++) {
        const m = findMismatch(validator.element, value[i], `${path}[${i}]`);
        if (m) return m;
      }
      return null;
    }
    case "record": {
      if (typeOf(value) !== "object") return [path, describe(validator)];
      for (const [k, item] of Object.entries(value as object)) {
        const m = findMismatch(validator.value, item, `${path}.${k}`);
        if (m) return m;
      }
      return null;
    }
    case "object": {
      if (typeOf(value) !== "object") return [path, "object"];
      const fields = validator.fields as Record<string, Validator>;
      for (const key of Object.keys(value as object)) {
        // Own keys only: `in` would let names like "constructor" or "__proto__" slip through.
        if (!Object.hasOwn(fields, key) && (value as Record<string, unknown>)[key] !== undefined) {
          return [`${path}.${key}`, "no such field"];
        }
      }
      for (const [key, fieldValidator] of Object.entries(fields)) {
        const m = findMismatch(fieldValidator, (value as Record<string, unknown>)[key], `${path}.${key}`);
        if (m) return m;
      }
      return null;
    }
    case "union": {
      for (const member of validator.members as Validator[]) {
        if (!findMismatch(member, value, path)) return null;
      }
      return [path, describe(validator)];
    }
  }
}

/**
 * Throws a `ValidationError` naming the offending path and the expected type when `value` does
 * not match. `code` tells the transport whether it was the caller's arguments or a document.
 *
 * @example
 * ```ts
 * import { validate, v } from "service-auth/values";
 *
 * const input = v.object({ email: v.string(), age: v.optional(v.number()) });
 * // Throws a ValidationError (INVALID_ARGUMENTS) naming the path, e.g. "body.age must be number, got string".
 * validate(input, await request.json(), "body");
 * ```
 */
export function validate(
  validator: Validator,
  value: unknown,
  path: string,
  code: "INVALID_ARGUMENTS" | "SCHEMA_VIOLATION" = "INVALID_ARGUMENTS",
): void {
  const m = findMismatch(validator, value, path);
  if (!m) return;
  const [at, expected] = m;
  const received = at === path ? value : getAt(value, at.slice(path.length));
  const detail =
    expected === "no such field"
      ? `${at} is not a field of the validator`
      : `${at} must be ${expected}, got ${received === undefined ? "nothing" : typeOf(received)}`;
  throw new ValidationError(code, at, expected, detail);
}

function getAt(value: unknown, rest: string): unknown {
  let cur: any = value;
  for (const part of rest.match(/[^.[\]]+/g) ?? []) {
    if (cur == null) return undefined;
    cur = cur[part];
  }
  return cur;
}
