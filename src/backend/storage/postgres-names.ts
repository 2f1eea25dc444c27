/**
 * SQL identifiers of the PostgreSQL layout. PostgreSQL silently truncates identifiers to 63
 * bytes, so two long names could collapse into one; longer names are shortened here with a hash
 * suffix instead, which keeps them distinct and stable across restarts.
 */
import { createHash } from "node:crypto";

const MAX_IDENTIFIER_BYTES = 63;

/** `name` as a quoted identifier, shortened deterministically when PostgreSQL would truncate it. */
export function ident(name: string): string {
  let n = name;
  if (Buffer.byteLength(n) > MAX_IDENTIFIER_BYTES) {
    const hash = createHash("sha256").update(name).digest("hex").slice(0, 12);
    let head = n;
    while (Buffer.byteLength(head) > MAX_IDENTIFIER_BYTES - 13) head = head.slice(0, -1);
    n = `${head}_${hash}`;
  }
  return `"${n.replace(/"/g, '""')}"`;
}

export const tableIdent = (table: string) => ident(`t_${table}`);
export const keyColumnIdent = (index: string) => ident(`k_${index}`);
export const indexIdent = (table: string, index: string) => ident(`i_${table}_${index}`);
/** Unquoted `t_<table>` as stored in the catalog (for information_schema lookups). */
export const tableRawName = (table: string) => ident(`t_${table}`).slice(1, -1).replace(/""/g, '"');
export const keyColumnRawName = (index: string) => ident(`k_${index}`).slice(1, -1).replace(/""/g, '"');
