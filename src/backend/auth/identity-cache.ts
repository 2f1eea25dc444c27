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
import { type Commit, commitTables, type ReadSet } from "../db/read-write-sets.ts";
import type { UserIdentity } from "../functions/define.ts";

/** What the cache needs from the consistency core (commits/commits.ts). */
export interface CacheFreshness {
  on(consumer: "identity-cache", listener: CommitListener): () => void;
  changedSince(stamp: Stamp, readSet: ReadSet): boolean;
  newEpoch(): void;
}

interface Entry {
  /** The whole token: an entry answers only for exactly this string. */
  token: string;
  identity: UserIdentity;
  readSet: ReadSet;
  /** Token `exp`, seconds. */
  exp?: number;
  /** ms since epoch after which the entry must not be used. */
  validUntil: number;
  docKeys: string[];
  /** The tables of `docKeys`, each once. */
  tables: string[];
}

const docKey = (table: string, id: string) => `${table}\u0000${id}`;

/**
 * The map key of a token: its last characters (the end of the signature). A token is hashed on
 * every request, as each arrives as a new string; hashing a JWT whole (about 1 kB) costs more than
 * the rest of a cached lookup. Entries keep the whole token and answer only when it is equal: a
 * token ending like a cached one is not served from the cache; two verified tokens ending alike
 * (signatures agreeing in 192 bits) would merely take each other's place.
 */
const KEY_CHARS = 32;
const keyOf = (token: string) => (token.length > KEY_CHARS ? token.slice(-KEY_CHARS) : token);

export class IdentityCache {
  /** By `keyOf(token)`. */
  private readonly entries = new Map<string, Entry>();
  /** Document key → the `keyOf` keys of the entries that read it. */
  private readonly byDoc = new Map<string, Set<string>>();
  /**
   * Table → how many entries read a document of it: a commit of other tables is skipped without
   * reading its writes (another instance's are parsed only when read, `commits/announced.ts`).
   */
  private readonly byTable = new Map<string, number>();

  /** Hears every commit as the `identity-cache` consumer (`invalidate` phase, commits/consumers.ts). */
  constructor(
    private readonly freshness: CacheFreshness,
    private readonly maxEntries = 10_000,
  ) {
    freshness.on("identity-cache", (commit) => this.invalidate(commit));
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached identity for `token`, if still valid at `now` (ms). */
  get(
    token: string,
    now = Date.now(),
  ): { identity: UserIdentity; readSet: ReadSet; exp?: number } | undefined {
    const key = keyOf(token);
    const entry = this.entries.get(key);
    if (!entry || entry.token !== token) return undefined;
    if (now >= entry.validUntil) {
      this.delete(key);
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
    const key = keyOf(token);
    this.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    const tables = [...new Set(readSet.ids.map((r) => r.table))];
    this.entries.set(key, {
      token,
      identity: Object.freeze(identity),
      readSet,
      exp,
      validUntil,
      docKeys,
      tables,
    });
    for (const table of tables) this.byTable.set(table, (this.byTable.get(table) ?? 0) + 1);
    for (const doc of docKeys) {
      let keys = this.byDoc.get(doc);
      if (!keys) this.byDoc.set(doc, (keys = new Set()));
      keys.add(key);
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
    let read = false;
    for (const table of commitTables(commit)) if (this.byTable.has(table)) read = true;
    if (!read) return;
    for (const w of commit.writes) {
      const keys = this.byDoc.get(docKey(w.table, w.id));
      if (!keys) continue;
      for (const key of [...keys]) this.delete(key);
    }
    // An announced commit's JSON found malformed only now: nothing it wrote can be trusted.
    if (commit.unknown) this.clear();
  }

  /** Drops every entry and starts a new epoch: nothing computed before may be stored after. */
  clear(): void {
    this.freshness.newEpoch();
    this.entries.clear();
    this.byDoc.clear();
    this.byTable.clear();
  }

  /** Drops the entry under `key` (a `keyOf` key). */
  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    for (const table of entry.tables) {
      const count = (this.byTable.get(table) ?? 1) - 1;
      if (count > 0) this.byTable.set(table, count);
      else this.byTable.delete(table);
    }
    for (const doc of entry.docKeys) {
      const keys = this.byDoc.get(doc);
      keys?.delete(key);
      if (keys?.size === 0) this.byDoc.delete(doc);
    }
  }
}
