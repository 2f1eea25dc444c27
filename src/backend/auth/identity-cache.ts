/**
 * Remembers, per bearer token, the identity that steps 1 and 2 established, so a client that sends
 * the same token again skips the signature check and the session lookup.
 *
 * Safe because an entry dies as soon as anything it depended on may have changed:
 * - a commit of this process that writes a document step 2 read (the session, the user) drops it
 *   before the mutation's caller gets its answer, so revocation and bans apply on the next request;
 * - a commit of another process or instance whose write set is unknown clears everything;
 * - a change of the key set (rotation) clears everything, and a result verified before that
 *   change (still in flight when it happened) is never stored;
 * - it expires at the token's `exp` and at the identity's `sessionExpiresAt`.
 * Only identities whose step 2 read documents by id are cached (no range reads to track). A
 * result computed from a snapshot that a later commit touched is never cached: the cache keeps the
 * doc keys of recent commits and checks those newer than the snapshot before storing.
 */
import type { DocumentWrite, ReadSet } from "../db/read-write-sets.ts";
import type { UserIdentity } from "../functions/define.ts";

interface Entry {
  identity: UserIdentity;
  readSet: ReadSet;
  /** Token `exp`, seconds. */
  exp?: number;
  /** ms since epoch after which the entry must not be used. */
  validUntil: number;
  docKeys: string[];
}

const docKey = (table: string, id: string) => `${table}\u0000${id}`;

const RECENT_COMMITS = 256;

export class IdentityCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byDoc = new Map<string, Set<string>>();
  /** Doc keys written by the latest commits (null: unknown write set), oldest first. */
  private readonly recent: { sequence: number; keys: Set<string> | null }[] = [];
  /** Bumped by every `clear()`; a result computed before a clear must not be stored after it. */
  private generation = 0;

  constructor(private readonly maxEntries = 10_000) {}

  get size(): number {
    return this.entries.size;
  }

  /** Take before step 1 and pass to `set`, so a key-set change during steps 1+2 is noticed. */
  get epoch(): number {
    return this.generation;
  }

  /** The cached identity for `token`, if still valid at `now` (ms). */
  get(
    token: string,
    now = Date.now(),
  ): { identity: UserIdentity; readSet: ReadSet; exp?: number } | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (now >= entry.validUntil) {
      this.delete(token);
      return undefined;
    }
    return entry;
  }

  /**
   * Caches a successful steps 1+2 computed from a snapshot taken after commit `sinceSequence`;
   * ignored when step 2 read index ranges (not tracked here), a newer commit touched its reads, or
   * the cache was cleared (e.g. new signing keys) since `epoch` was taken.
   */
  set(
    token: string,
    identity: UserIdentity,
    readSet: ReadSet,
    exp: number | undefined,
    sinceSequence: number,
    epoch = this.generation,
  ): void {
    if (epoch !== this.generation || readSet.ranges.length > 0 || typeof exp !== "number") return;
    const docKeys = readSet.ids.map((r) => docKey(r.table, r.id));
    if (this.touchedSince(sinceSequence, docKeys)) return;
    const sessionEnd =
      typeof identity.sessionExpiresAt === "number" ? identity.sessionExpiresAt : Number.POSITIVE_INFINITY;
    const validUntil = Math.min(exp * 1000, sessionEnd);
    if (!(validUntil > Date.now())) return;
    this.delete(token);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    this.entries.set(token, { identity: Object.freeze(identity), readSet, exp, validUntil, docKeys });
    for (const key of docKeys) {
      let tokens = this.byDoc.get(key);
      if (!tokens) this.byDoc.set(key, (tokens = new Set()));
      tokens.add(token);
    }
  }

  private touchedSince(sequence: number, docKeys: string[]): boolean {
    const oldest = this.recent[0]?.sequence;
    // History older than what we keep: assume the worst.
    if (oldest !== undefined && oldest > sequence + 1) return true;
    for (const commit of this.recent) {
      if (commit.sequence <= sequence) continue;
      if (!commit.keys) return true;
      for (const key of docKeys) if (commit.keys.has(key)) return true;
    }
    return false;
  }

  /**
   * Records commit `sequence` and drops every entry that read a document it wrote; `writes`
   * null means another process committed something unknown, which drops everything.
   */
  commit(sequence: number, writes: readonly DocumentWrite[] | null): void {
    this.recent.push({ sequence, keys: writes ? new Set(writes.map((w) => docKey(w.table, w.id))) : null });
    if (this.recent.length > RECENT_COMMITS) this.recent.shift();
    if (!writes) {
      this.clear();
      return;
    }
    this.invalidate(writes);
  }

  /** Drops every entry that read a document written by `writes`. */
  private invalidate(writes: readonly DocumentWrite[]): void {
    if (this.entries.size === 0) return;
    for (const w of writes) {
      const tokens = this.byDoc.get(docKey(w.table, w.id));
      if (!tokens) continue;
      for (const token of [...tokens]) this.delete(token);
    }
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.byDoc.clear();
  }

  private delete(token: string): void {
    const entry = this.entries.get(token);
    if (!entry) return;
    this.entries.delete(token);
    for (const key of entry.docKeys) {
      const tokens = this.byDoc.get(key);
      tokens?.delete(token);
      if (tokens?.size === 0) this.byDoc.delete(key);
    }
  }
}
