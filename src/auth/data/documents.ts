/** Shaping documents between Better Auth's values and what is stored or returned. */
import type { PropertyValidators, Validator } from "service-auth/values";
import type { TableShape } from "../where/index.ts";
import type { StoredDoc } from "./types.ts";

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a field with `validator` can hold `null`. */
export function acceptsNull(validator: Validator): boolean {
  if (validator.kind === "null" || validator.kind === "any") return true;
  if (validator.kind === "union") return (validator.members as Validator[]).some(acceptsNull);
  return false;
}

/**
 * Better Auth writes `null` for "no value" (e.g. `banReason: null` on unban); fields that cannot
 * hold null lose the value instead. `undefined` in an update removes the field (patch semantics).
 */
export function withoutNulls(
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

/** `doc` with only the `select`ed fields (all of them when none is named). */
export function project(doc: StoredDoc | null, select: readonly string[] | undefined): StoredDoc | null {
  if (!doc || !select?.length) return doc;
  const out: Record<string, unknown> = {};
  for (const field of select) if (field in doc) out[field] = doc[field];
  return out as StoredDoc;
}
