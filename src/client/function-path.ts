/**
 * Function paths and value-based query keys for the clients. References come from the platform's
 * `references.ts`, a dependency-free module (no server code), so `api.messages.list` works in a
 * browser bundle too.
 */
import { stableStringify } from "../protocol/stable-stringify.ts";

export { anyApi, functionPath } from "../backend/functions/references.ts";

/** Identifies a query by path and args *value*, so a new args object with equal content is the same query. */
export function queryKey(path: string, args: unknown): string {
  return `${path}\u0000${stableStringify(args ?? {})}`;
}
