/**
 * Function paths and value-based query keys, without importing server code (the platform's
 * references use the same `Symbol.for` key).
 */
import type { FunctionReference } from "../backend/functions/references.ts";

const PATH = Symbol.for("service-auth.functionPath");

/** The `module:name` path of a reference, or a path string as is. */
export function functionPath(ref: FunctionReference | string): string {
  if (typeof ref === "string") return ref;
  const path = (ref as unknown as Record<symbol, unknown>)?.[PATH];
  if (typeof path !== "string") throw new TypeError("Not a function reference");
  return path;
}

/** JSON with sorted object keys and `undefined` fields dropped: equal args give equal strings. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) parts.push(`${JSON.stringify(key)}:${stableStringify(field)}`);
  }
  return `{${parts.join(",")}}`;
}

/** Identifies a query by path and args *value*, so a new args object with equal content is the same query. */
export function queryKey(path: string, args: unknown): string {
  return `${path}\u0000${stableStringify(args ?? {})}`;
}
