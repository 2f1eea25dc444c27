/**
 * SQL identifiers of the physical layout, shared by every SQL engine: table `t_<table>`, key
 * column `k_<index>`, and index `i_<table>_<index>` with every underscore of the table name after
 * its first character doubled. Index names share one namespace per database (or schema), and
 * without the doubling table `a_b` index `c` and table `a` index `b_c` would both be `i_a_b_c`;
 * index names never start with `_` (schema.ts), so the first single `_` after the table is
 * unambiguous. Tables without such underscores (nearly all, `_env` included) keep the names
 * earlier versions gave them; the migration renames the others (`legacyIndex`).
 */
import { createHash } from "node:crypto";

/** Raw (unquoted) identifiers as the engine's catalog stores them. */
export interface SqlNames {
  table(table: string): string;
  keyColumn(index: string): string;
  index(table: string, index: string): string;
  /** The index name versions before the underscore escaping used; equal to `index` for most tables. */
  legacyIndex(table: string, index: string): string;
}

/**
 * Names for an engine whose identifiers hold at most `maxIdentifierBytes` bytes. PostgreSQL
 * silently truncates at 63, so two long names could collapse into one; longer names are
 * shortened here with a hash suffix instead, which keeps them distinct and stable.
 */
export function sqlNames(maxIdentifierBytes = Number.POSITIVE_INFINITY): SqlNames {
  const bounded = (name: string) => shorten(name, maxIdentifierBytes);
  return {
    table: (table) => bounded(`t_${table}`),
    keyColumn: (index) => bounded(`k_${index}`),
    index: (table, index) => bounded(`i_${table.slice(0, 1)}${table.slice(1).replace(/_/g, "__")}_${index}`),
    legacyIndex: (table, index) => bounded(`i_${table}_${index}`),
  };
}

function shorten(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 12);
  let head = name;
  while (Buffer.byteLength(head) > maxBytes - 13) head = head.slice(0, -1);
  return `${head}_${hash}`;
}

/** `name` as a double-quoted SQL identifier (the same syntax on SQLite and PostgreSQL). */
export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
