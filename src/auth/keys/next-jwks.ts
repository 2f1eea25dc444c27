/**
 * The `JWKS` value after a key operation (rotation or retirement). Servers sign and verify with
 * the variable, the operations change the `jwks` table: the key functions store this value in
 * the variable themselves, so both say the same whatever order the commands run in.
 *
 * The table's keys come first; keys the variable held that the table lacks (a rotation whose
 * output was never stored, or a value set by hand) still sign the tokens in circulation, so they
 * are kept as the operation treats the table's own old keys: a graceful rotation lets them verify
 * until its `retireAt`, a hard rotation drops them, a retirement drops only what it retired or
 * what has expired.
 */
import { isActiveKey, parseStoredJwks, type StoredJwk, serializeJwks } from "./stored-jwks.ts";

/** What the operation did to the table. */
export type KeyChange =
  | { kind: "hard" }
  | { kind: "graceful"; retireAt: number }
  | { kind: "retire"; retired: readonly string[] };

/**
 * `table` (the table's key set after the operation, as the plugin answers it) merged with the
 * keys of `previous` (the variable before it) that the table lacks, as `change` treats them.
 *
 * @example
 * ```ts
 * // The variable held K1, the table (after a graceful rotation) K2 and K3:
 * nextJwksValue(table, previous, { kind: "graceful", retireAt }); // K1 (until retireAt), K2, K3
 * ```
 */
export function nextJwksValue(
  table: string,
  previous: string | undefined,
  change: KeyChange,
  now = Date.now(),
): string {
  if (previous === undefined || change.kind === "hard") return table;
  const rows = parseStoredJwks(table);
  const inTable = new Set(rows.map((r) => r.id));
  let carried: StoredJwk[];
  try {
    carried = parseStoredJwks(previous).filter((r) => !inTable.has(r.id) && isActiveKey(r, now));
  } catch {
    return table; // an unreadable variable signs nothing: the table's set replaces it
  }
  if (change.kind === "graceful") {
    carried = carried.map((r) => ({
      ...r,
      expiresAt: Math.min(r.expiresAt ?? change.retireAt, change.retireAt),
    }));
  } else {
    const retired = new Set(change.retired);
    carried = carried.filter((r) => !retired.has(r.id));
  }
  if (carried.length === 0) return table;
  return serializeJwks([...carried, ...rows].sort((a, b) => a.createdAt - b.createdAt));
}
