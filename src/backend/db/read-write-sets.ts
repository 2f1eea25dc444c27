/**
 * Read sets and write sets: what a function execution depended on, and what a commit changed.
 * A subscription must re-run exactly when a commit's write set intersects its read set.
 */
import type { StoredDocument } from "../storage/engine.ts";
import { inRange, type KeyRange } from "../storage/indexes/key.ts";
import type { Catalog } from "./catalog.ts";
import { indexKey } from "./catalog.ts";

/** A range of one index that was read (`by_id` ranges are single document ids). */
export interface ReadRange {
  table: string;
  index: string;
  range: KeyRange;
}

export interface ReadSet {
  /** Ids read with `db.get` (including ids that did not exist: their creation matters). */
  ids: { table: string; id: string }[];
  ranges: ReadRange[];
}

/** One document change of a commit. */
export interface DocumentWrite {
  table: string;
  id: string;
  before: StoredDocument | null;
  after: StoredDocument | null;
}

export interface Commit {
  /** Monotonic per process, for ordering pushes. */
  sequence: number;
  /**
   * The document changes. Of another instance's commit they are parsed when first read
   * (`commits/announced.ts`): a listener checks {@link Commit.tables} (or uses
   * {@link commitTables}) before reading them when it cares about some tables only.
   */
  writes: DocumentWrite[];
  /** Set for commits made by another process/instance whose write set is not known. */
  unknown?: boolean;
  /** The tables written, when known without reading `writes` (another instance's commit). */
  tables?: readonly string[];
}

/** The tables `commit` wrote (from its header when it has one: its writes stay unparsed). */
export function commitTables(commit: Commit): readonly string[] {
  if (commit.tables) return commit.tables;
  const writes = commit.writes;
  if (writes.length === 1) return [writes[0].table];
  return [...new Set(writes.map((w) => w.table))];
}

export function emptyReadSet(): ReadSet {
  return { ids: [], ranges: [] };
}

/** True when `write` could change the result of reading `readSet`. */
export function writeTouches(catalog: Catalog, readSet: ReadSet, write: DocumentWrite): boolean {
  for (const r of readSet.ids) if (r.id === write.id && r.table === write.table) return true;
  for (const r of readSet.ranges) {
    if (r.table !== write.table) continue;
    const fields = catalog.table(r.table).indexes.get(r.index);
    if (!fields) return true;
    if (write.before && inRange(indexKey(write.before, fields), r.range)) return true;
    if (write.after && inRange(indexKey(write.after, fields), r.range)) return true;
  }
  return false;
}

export function commitTouches(catalog: Catalog, readSet: ReadSet, commit: Commit): boolean {
  if (commit.unknown) return true;
  for (const w of commit.writes) if (writeTouches(catalog, readSet, w)) return true;
  return false;
}

/** Tables a read set depends on (for bucketing subscriptions). */
export function tablesOf(readSet: ReadSet): Set<string> {
  const out = new Set<string>();
  for (const r of readSet.ids) out.add(r.table);
  for (const r of readSet.ranges) out.add(r.table);
  return out;
}
