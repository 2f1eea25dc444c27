/**
 * The write set a commit announces to other instances (PostgreSQL's commit log and NOTIFY): the
 * documents before and after each write, so a receiving instance re-runs only the subscriptions
 * the commit touches. Anything unreadable decodes to null, meaning "unknown write set".
 */
import type { DocumentWrite } from "../../db/read-write-sets.ts";

export function encodeWrites(writes: DocumentWrite[]): string {
  return JSON.stringify(writes.map((w) => ({ table: w.table, id: w.id, before: w.before, after: w.after })));
}

const isDoc = (v: unknown) =>
  v === null ||
  (typeof v === "object" && !Array.isArray(v) && typeof (v as { _id?: unknown })._id === "string");

/** The writes of a payload made by {@link encodeWrites}, or null when it is missing or malformed. */
export function decodeWrites(payload: string | undefined): DocumentWrite[] | null {
  if (!payload) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return null;
  for (const w of parsed) {
    if (typeof w !== "object" || w === null) return null;
    if (typeof w.table !== "string" || typeof w.id !== "string") return null;
    if (!isDoc(w.before ?? null) || !isDoc(w.after ?? null)) return null;
    w.before ??= null;
    w.after ??= null;
  }
  return parsed as DocumentWrite[];
}
