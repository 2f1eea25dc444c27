/**
 * One read of an index range in batches, as `Query` makes it: the scans to request, the documents
 * kept, and the part of the range actually covered, which goes into the read set. The engine's
 * scans are awaited only when they return a promise (PostgreSQL); SQLite's answer at once, so a
 * point read costs no promise turn below the query method the function awaits.
 */
import type {
  Awaitable,
  ReadTransaction,
  ScannedRow,
  ScanRequest,
  StoredDocument,
} from "../storage/engine.ts";
import type { KeyRange } from "../storage/indexes/key.ts";
import type { ReadSet } from "./read-write-sets.ts";

const MAX_BATCH = 256;

/** The smallest key after `key`. */
function keyAfter(key: Buffer): Buffer {
  const next = Buffer.allocUnsafe(key.length + 1);
  key.copy(next, 0);
  next[key.length] = 0;
  return next;
}

/** A range with only the bounds that are set (as the spread copies it replaces produced). */
function bounds(lower: Buffer | undefined, upper: Buffer | undefined): KeyRange {
  const range: KeyRange = {};
  if (lower) range.lower = lower;
  if (upper) range.upper = upper;
  return range;
}

/** What a range read found. */
export interface RangeRead<Doc> {
  docs: Doc[];
  /** The last index key read (absent when nothing was read). */
  lastKey?: Buffer;
  /** Whether the range ended: nothing more matches after `lastKey`. */
  done: boolean;
}

/** What a range read reads: the range and its order, which documents it keeps, how many. */
export interface RangeScanOptions<Doc> {
  table: string;
  index: string;
  range: KeyRange;
  order: "asc" | "desc";
  /** Keeps a document (the query's filters); undefined keeps every one. */
  matches: ((doc: Doc) => boolean) | undefined;
  /** Stop after this many kept documents. */
  limit: number;
  /** Start after this key (a pagination cursor). */
  after?: Buffer;
  /**
   * Whether rows carry their keys. `false` expects the range to end within the first batch: the
   * scan then skips the index keys, and is repeated with them (same snapshot, same rows) only when
   * it did not end.
   */
  keys: boolean;
}

/**
 * Reads up to `limit` matching documents of the range, records the range covered in `readSet`
 * (also when the range did not end: exactly the part scanned), and returns what it found; a
 * promise only when the engine's scans are.
 */
export function readRange<Doc extends StoredDocument>(
  tx: ReadTransaction,
  readSet: ReadSet,
  options: RangeScanOptions<Doc>,
): Awaitable<RangeRead<Doc>> {
  const scan = new RangeScan(options);
  for (let request = scan.next(); request; request = scan.next()) {
    const rows = tx.scan(request);
    if (rows instanceof Promise) return finishAsync(tx, readSet, scan, rows);
    scan.took(rows);
  }
  return scan.finish(readSet);
}

async function finishAsync<Doc extends StoredDocument>(
  tx: ReadTransaction,
  readSet: ReadSet,
  scan: RangeScan<Doc>,
  pending: Promise<ScannedRow<boolean>[]>,
): Promise<RangeRead<Doc>> {
  scan.took(await pending);
  for (let request = scan.next(); request; request = scan.next()) scan.took(await tx.scan(request));
  return scan.finish(readSet);
}

/** The state of one range read between the engine's scans. */
class RangeScan<Doc extends StoredDocument> {
  private readonly docs: Doc[] = [];
  private readonly asc: boolean;
  private readonly start: KeyRange;
  // Ranges are never mutated (the read set keeps them), so each step makes a new one.
  private range: KeyRange;
  private keys: boolean;
  private lastKey: Buffer | undefined;
  private done = false;
  /** The request whose rows `took` expects; undefined once the read is over. */
  private request: ScanRequest<boolean> | undefined;
  /** Set while the keyless batch is read again for its keys: how many of its rows were consumed. */
  private keysFor: number | undefined;

  constructor(private readonly options: RangeScanOptions<Doc>) {
    const { range, after } = options;
    this.asc = options.order === "asc";
    this.range = range;
    if (after) this.range = this.asc ? bounds(keyAfter(after), range.upper) : bounds(range.lower, after);
    this.start = this.range;
    this.keys = options.keys;
    this.request = options.limit > 0 ? this.batch() : undefined;
  }

  /** The scan to make next, or undefined when the read is over. */
  next(): ScanRequest<boolean> | undefined {
    return this.request;
  }

  /** Takes the rows of the request `next` returned. */
  took(rows: ScannedRow<boolean>[]): void {
    if (this.keysFor !== undefined) {
      // The keyless batch again, with its keys: the last one consumed bounds the covered range.
      this.lastKey = rows[this.keysFor - 1]?.key;
      this.keysFor = undefined;
      this.advance();
      return;
    }
    const { matches, limit } = this.options;
    const want = this.request!.limit;
    let consumed = 0;
    for (const row of rows) {
      this.lastKey = row.key;
      consumed++;
      if (matches === undefined || matches(row.doc as Doc)) {
        this.docs.push(row.doc as Doc);
        if (this.docs.length >= limit) break;
      }
    }
    // The range ended only if the engine ran out of rows and we looked at all of them; with a
    // filter the limit can be reached mid-batch, and the rest of that batch is still unread.
    if (rows.length < want && consumed === rows.length) {
      this.done = true;
      this.request = undefined;
      return;
    }
    if (!this.keys) {
      // Not ended after all: the last key read bounds the covered range, so read it.
      this.keys = true;
      this.keysFor = consumed;
      this.request = { ...this.request!, keys: true };
      return;
    }
    this.advance();
  }

  /** Moves past the last key read, or ends the read when the limit is reached. */
  private advance(): void {
    const { lastKey } = this;
    if (!lastKey || this.docs.length >= this.options.limit) {
      this.request = undefined;
      return;
    }
    this.range = this.asc ? bounds(keyAfter(lastKey), this.range.upper) : bounds(this.range.lower, lastKey);
    this.request = this.batch();
  }

  private batch(): ScanRequest<boolean> {
    const { table, index, order, matches, limit } = this.options;
    const want = matches ? MAX_BATCH : Math.min(MAX_BATCH, limit - this.docs.length);
    return { table, index, range: this.range, order, limit: want, keys: this.keys };
  }

  /** Records the covered range in `readSet` and returns what was read. */
  finish(readSet: ReadSet): RangeRead<Doc> {
    const { start, lastKey, done } = this;
    // The result depends on exactly the part of the range that was scanned.
    let covered = start;
    if (!done && lastKey)
      covered = this.asc ? bounds(start.lower, keyAfter(lastKey)) : bounds(lastKey, start.upper);
    readSet.ranges.push({ table: this.options.table, index: this.options.index, range: covered });
    return { docs: this.docs, lastKey, done };
  }
}
