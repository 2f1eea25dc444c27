/**
 * Function paths and value-based query keys for the clients. References come from the platform's
 * `references.ts`, a dependency-free module (no server code), so `api.messages.list` works in a
 * browser bundle too.
 */
export { anyApi, functionPath } from "../backend/functions/references.ts";

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
