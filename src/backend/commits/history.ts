/**
 * The recent commits of this process, to answer one question for everyone who read something and
 * acts on it later: "did a commit after sequence N touch these reads?" The identity cache asks it
 * before storing a result, the reactor when a run ends.
 *
 * It keeps the latest {@link RECENT_COMMITS} commits (up to twice as many: it forgets in batches),
 * and every commit after a sequence someone {@link CommitHistory.retain}s (a reactor run in
 * progress). Asked about a sequence older than what it kept, it assumes the worst: touched.
 * Documents are kept only while retained (index range reads need them); otherwise a range read of
 * a table a commit wrote counts as touched. Another instance's commit whose documents nobody parsed
 * during its delivery (`announced.ts`) is kept by table only: any read of one of its tables counts
 * as touched.
 */
import { type Catalog, indexKey } from "../db/catalog.ts";
import { type Commit, commitTables, type DocumentWrite, type ReadSet } from "../db/read-write-sets.ts";
import { inRange } from "../storage/indexes/key.ts";
import { writesAtHand } from "./announced.ts";

/** Commits kept at least for readers that retain nothing (the identity cache); at most twice as many. */
export const RECENT_COMMITS = 256;

/**
 * Whether a commit touches a read set, with the index keys of each write computed once per commit
 * rather than once per read set: a commit is checked against every watch of its tables, possibly
 * thousands.
 */
export class CommitMatcher {
  /** Index keys per write and index, computed when first needed. */
  private keys: Map<DocumentWrite, Map<string, (Buffer | null)[]>> | undefined;

  constructor(
    private readonly catalog: Catalog,
    readonly commit: Commit,
  ) {}

  private keysOf(write: DocumentWrite, index: string, fields: string[]): (Buffer | null)[] {
    this.keys ??= new Map();
    let byIndex = this.keys.get(write);
    if (!byIndex) this.keys.set(write, (byIndex = new Map()));
    let k = byIndex.get(index);
    if (!k) {
      k = [write.before && indexKey(write.before, fields), write.after && indexKey(write.after, fields)];
      byIndex.set(index, k);
    }
    return k;
  }

  /** True when the commit could change the result of reading `readSet` (always, if unknown). */
  touches(readSet: ReadSet): boolean {
    // Read first: parsing an announced commit's writes may find them malformed (then unknown).
    const writes = this.commit.writes;
    if (this.commit.unknown) return true;
    for (const w of writes) {
      for (const r of readSet.ids) if (r.id === w.id && r.table === w.table) return true;
      for (const r of readSet.ranges) {
        if (r.table !== w.table) continue;
        const fields = this.catalog.table(r.table).indexes.get(r.index);
        if (!fields) return true;
        for (const key of this.keysOf(w, r.index, fields)) if (key && inRange(key, r.range)) return true;
      }
    }
    return false;
  }
}

const docKey = (table: string, id: string) => `${table}\u0000${id}`;

/**
 * One recorded commit: whole while a retained reader may need it, else only what it wrote to — by
 * document when its writes are at hand, by table when they were never parsed.
 */
class Recorded {
  /** The commit with its documents: range reads are matched exactly. Dropped when not retained. */
  full: CommitMatcher | null;
  /** An announced commit not parsed yet: read at {@link settle} if someone parsed it meanwhile. */
  private pending: Commit | null = null;
  private unknown: boolean;
  /** Documents written; null: not known (any read of {@link tables} counts as touched). */
  private docs: Set<string> | null = null;
  private readonly tables: Set<string>;

  constructor(
    readonly sequence: number,
    matcher: CommitMatcher,
    keepDocuments: boolean,
  ) {
    const commit = matcher.commit;
    this.full = keepDocuments ? matcher : null;
    this.unknown = commit.unknown === true;
    if (writesAtHand(commit)) {
      this.tables = new Set();
      this.readDocs(commit);
    } else {
      this.tables = new Set(commitTables(commit));
      this.pending = commit;
    }
  }

  private readDocs(commit: Commit): void {
    this.unknown ||= commit.unknown === true;
    const docs = new Set<string>();
    for (const w of commit.writes) {
      docs.add(docKey(w.table, w.id));
      this.tables.add(w.table);
    }
    this.docs = docs;
  }

  /**
   * Keeps the documents if they were parsed by now, else the tables only; drops the commit. Not
   * while the whole commit is kept anyway (a retained reader may still parse it).
   */
  settle(): void {
    const commit = this.pending;
    if (!commit || this.full) return;
    this.pending = null;
    if (writesAtHand(commit)) this.readDocs(commit);
    else this.unknown ||= commit.unknown === true;
  }

  touches(readSet: ReadSet): boolean {
    if (this.full) return this.full.touches(readSet);
    this.settle();
    if (this.unknown) return true;
    const docs = this.docs;
    for (const r of readSet.ids) {
      if (docs ? docs.has(docKey(r.table, r.id)) : this.tables.has(r.table)) return true;
    }
    // Without the documents a write to the table may have been in the range: assume it was.
    for (const r of readSet.ranges) if (this.tables.has(r.table)) return true;
    return false;
  }
}

export class CommitHistory {
  /** Oldest first, consecutive sequences. */
  private readonly entries: Recorded[] = [];
  /** Retained sequences and how many hold each. */
  private readonly retained = new Map<number, number>();

  constructor(private readonly catalog: Catalog) {}

  /**
   * Records the next commit (sequences are consecutive) and forgets what no one needs. Its
   * documents are kept only while a reader retains it: an unretained reader (the identity cache)
   * reads by id, and the latest commits must not hold large documents in memory.
   */
  record(commit: Commit): void {
    this.entries.push(
      new Recorded(commit.sequence, new CommitMatcher(this.catalog, commit), this.retained.size > 0),
    );
    this.trim();
  }

  /**
   * The delivery of `commit` (just recorded) is over: what its listeners parsed of it is kept by
   * document, an announced commit nobody parsed by table (`announced.ts`).
   */
  settle(commit: Commit): void {
    const last = this.entries[this.entries.length - 1];
    if (last?.sequence === commit.sequence) last.settle();
  }

  /** The matcher of the commit just recorded, while readers retain it (else make one). */
  latest(): CommitMatcher | undefined {
    return this.entries[this.entries.length - 1]?.full ?? undefined;
  }

  /**
   * True when a commit after `sequence` may have changed what `readSet` read: one touched it, or
   * the history no longer reaches back that far.
   */
  touchedSince(sequence: number, readSet: ReadSet): boolean {
    const entries = this.entries;
    if (entries.length === 0) return false;
    const first = entries[0].sequence;
    if (first > sequence + 1) return true;
    for (let i = Math.max(0, sequence + 1 - first); i < entries.length; i++)
      if (entries[i].touches(readSet)) return true;
    return false;
  }

  /** Keeps every commit after `sequence`, documents included, until as many {@link release}s. */
  retain(sequence: number): void {
    this.retained.set(sequence, (this.retained.get(sequence) ?? 0) + 1);
  }

  release(sequence: number): void {
    const count = this.retained.get(sequence);
    if (count === undefined) return;
    if (count > 1) {
      this.retained.set(sequence, count - 1);
      return;
    }
    this.retained.delete(sequence);
    let oldest = Number.POSITIVE_INFINITY;
    for (const s of this.retained.keys()) if (s < oldest) oldest = s;
    // No reader needs the documents of the commits up to the oldest still retained.
    for (const entry of this.entries) {
      if (entry.sequence > oldest) break;
      entry.full = null;
      entry.settle();
    }
    this.trim();
  }

  private trim(): void {
    const entries = this.entries;
    // In batches: dropping the oldest entry on every commit moved the whole array each time (2 µs
    // per commit, measured; about 30 ns amortized this way).
    if (entries.length <= 2 * RECENT_COMMITS) return;
    let keepAfter = entries[entries.length - 1 - RECENT_COMMITS].sequence;
    for (const sequence of this.retained.keys()) if (sequence < keepAfter) keepAfter = sequence;
    const drop = keepAfter + 1 - entries[0].sequence;
    if (drop > 0) entries.splice(0, drop);
  }
}
