/**
 * Remembers, per bearer token, the identity that steps 1 and 2 established, so a client that sends
 * the same token again skips the signature check and the session lookup.
 *
 * Safe because an entry dies as soon as anything it depended on may have changed (the invariant
 * is stated once, in commits/commits.ts):
 * - a commit that writes a document step 2 read drops it in the commit's `invalidate` phase,
 *   before the mutation's caller or anyone else hears of the commit;
 * - a commit of another process or instance whose write set is unknown clears everything;
 * - a change of the key set (rotation) clears everything and starts a new epoch, so a result
 *   verified before that change (still in flight when it happened) is never stored;
 * - it expires at the token's `exp` and at the identity's `sessionExpiresAt`.
 * Only identities whose step 2 read documents by id are cached (no range reads to track). A
 * result computed from a snapshot that a later commit touched is never cached: `set` asks the
 * commits core whether anything changed since the result's stamp.
 */
import type { CommitListener, Stamp } from "../commits/commits.ts";
import type { Commit, ReadSet } from "../db/read-write-sets.ts";
import type { UserIdentity } from "../functions/define.ts";

/** What the cache needs from the consistency core (commits/commits.ts). */
export interface CacheFreshness {
  on(phase: "invalidate", listener: CommitListener): () => void;
  changedSince(stamp: Stamp, readSet: ReadSet): boolean;
  newEpoch(): void;
}

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

export class IdentityCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byDoc = new Map<string, Set<string>>();

  /** Hears every commit in its `invalidate` phase. */
  constructor(
    private readonly freshness: CacheFreshness,
    private readonly maxEntries = 10_000,
  ) {
    freshness.on("invalidate", (commit) => this.invalidate(commit));
  }

  get size(): number {
    return this.entries.size;
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
   * Caches a successful steps 1+2 computed from a snapshot no older than `stamp` (taken before
   * step 1); ignored when step 2 read index ranges (not tracked here), a newer commit touched its
   * reads, or the cache was cleared (e.g. new signing keys) since `stamp` was taken.
   */
  set(token: string, identity: UserIdentity, readSet: ReadSet, exp: number | undefined, stamp: Stamp): void {
    if (readSet.ranges.length > 0 || typeof exp !== "number") return;
    if (this.freshness.changedSince(stamp, readSet)) return;
    const docKeys = readSet.ids.map((r) => docKey(r.table, r.id));
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

  /**
   * A commit's `invalidate` phase: drops every entry that read a document it wrote; a commit of
   * another process with an unknown write set drops everything.
   */
  private invalidate(commit: Commit): void {
    if (commit.unknown) {
      this.clear();
      return;
    }
    if (this.entries.size === 0) return;
    for (const w of commit.writes) {
      const tokens = this.byDoc.get(docKey(w.table, w.id));
      if (!tokens) continue;
      for (const token of [...tokens]) this.delete(token);
    }
  }

  /** Drops every entry and starts a new epoch: nothing computed before may be stored after. */
  clear(): void {
    this.freshness.newEpoch();
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
