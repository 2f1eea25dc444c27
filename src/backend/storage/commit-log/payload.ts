/**
 * The write set a commit announces to other instances (PostgreSQL's commit log and NOTIFY; SQLite's
 * in cluster mode): the documents before and after each write, so a receiving instance re-runs only
 * the subscriptions the commit touches. Anything unreadable decodes to null, meaning "unknown write
 * set".
 *
 * The JSON comes behind a header naming the tables written (`messages,users[{…}]`), so an instance
 * with nothing that reads those tables records the commit without parsing its documents (most of
 * what another instance's commit costs this one; `commits/announced.ts`). A payload without the
 * header (written by an older version) is parsed whole, as before; a payload whose writes name a
 * table its header does not is malformed (unknown), so a header can never hide a write.
 */
import type { DocumentWrite } from "../../db/read-write-sets.ts";

/** Table names (`schema.ts` allows letters, digits and `_`), comma-separated, before the JSON. */
const HEADER = /^[A-Za-z0-9_]+(,[A-Za-z0-9_]+)*$/;

export function encodeWrites(writes: DocumentWrite[]): string {
  let tables: string;
  if (writes.length === 1) tables = writes[0].table;
  else tables = [...new Set(writes.map((w) => w.table))].join(",");
  return (
    tables +
    JSON.stringify(writes.map((w) => ({ table: w.table, id: w.id, before: w.before, after: w.after })))
  );
}

/**
 * The tables a payload's header names, without parsing its JSON; null when it has no header
 * (an older version's payload) or is missing or malformed: then only {@link decodeWrites} tells.
 */
export function payloadTables(payload: string | undefined): string[] | null {
  if (!payload) return null;
  const end = payload.indexOf("[");
  if (end <= 0) return null;
  const header = payload.slice(0, end);
  return HEADER.test(header) ? header.split(",") : null;
}

const isDoc = (v: unknown) =>
  v === null ||
  (typeof v === "object" && !Array.isArray(v) && typeof (v as { _id?: unknown })._id === "string");

/** The writes of a payload made by {@link encodeWrites}, or null when it is missing or malformed. */
export function decodeWrites(payload: string | undefined): DocumentWrite[] | null {
  if (!payload) return null;
  const start = payload.indexOf("[");
  if (start < 0) return null;
  let tables: string[] | null = null;
  if (start > 0) {
    tables = payloadTables(payload);
    if (!tables) return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(start > 0 ? payload.slice(start) : payload);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return null;
  for (const w of parsed) {
    if (typeof w !== "object" || w === null) return null;
    if (typeof w.table !== "string" || typeof w.id !== "string") return null;
    if (tables && !tables.includes(w.table)) return null;
    if (!isDoc(w.before ?? null) || !isDoc(w.after ?? null)) return null;
    w.before ??= null;
    w.after ??= null;
  }
  return parsed as DocumentWrite[];
}
