/**
 * The storage engine interface: everything above it (database API, functions, reactivity) is
 * engine-independent. An engine stores documents per table as JSON plus one binary key column
 * per index (see `index-key.ts`), so range scans are plain byte-range scans on every engine.
 */
import type { KeyRange } from "./indexes/key.ts";

/** A stored document: user fields plus `_id` and `_creationTime`. */
export type StoredDocument = Record<string, unknown> & { _id: string; _creationTime: number };

/** The physical layout the engine must create: tables and the index names of each. */
export interface StorageLayout {
  tables: Record<string, { indexes: { name: string; fields: string[] }[] }>;
}

/** Every index of `table` in `layout`, the implicit `by_creation_time` first. */
export function indexNamesOf(layout: StorageLayout, table: string): string[] {
  const t = layout.tables[table];
  if (!t) throw new Error(`Unknown table "${table}"`);
  return ["by_creation_time", ...t.indexes.map((i) => i.name)];
}

export interface ScanRequest<Keys extends boolean = boolean> {
  table: string;
  /** Index name; `by_creation_time` always exists. */
  index: string;
  range: KeyRange;
  order: "asc" | "desc";
  limit: number;
  /**
   * Whether rows carry their index key (default true). `false` leaves the key column unread,
   * which makes a point read measurably cheaper when the caller needs no key.
   */
  keys?: Keys;
}

/** A scanned document with its index key (left out when the scan asked for `keys: false`). */
export type ScannedRow<Keys extends boolean = true> = { doc: StoredDocument } & (Keys extends false
  ? { key?: undefined }
  : { key: Buffer });

/**
 * A value, or a promise of it. SQLite's scans answer at once, PostgreSQL's over the network; a
 * caller that takes the value as it comes saves SQLite's reads their promise turns.
 */
export type Awaitable<T> = T | Promise<T>;

/** Reads inside one consistent snapshot. */
export interface ReadTransaction {
  get(table: string, id: string): Promise<StoredDocument | null>;
  scan<Keys extends boolean = true>(request: ScanRequest<Keys>): Awaitable<ScannedRow<Keys>[]>;
  /** Counts index entries in a range without loading documents. */
  count(table: string, index: string, range: KeyRange): Promise<number>;
}

/** Reads and writes inside one ACID transaction. `keys` maps index name to the encoded key. */
export interface WriteTransaction extends ReadTransaction {
  insert(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void>;
  replace(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void>;
  delete(table: string, id: string): Promise<void>;
}

/** Computes each index key of a document; the engine calls it when it backfills a new index. */
export type KeyFunction = (table: string, doc: StoredDocument) => Record<string, Buffer>;

/**
 * The database's reachability as the engine's outage breaker knows it (outage-breaker.ts): what
 * retries after `DATABASE_UNAVAILABLE` consult, so they run again as soon as it answers.
 */
export interface Reachability {
  /** Whether the database is known unreachable now (every transaction is refused at once). */
  readonly isDown: boolean;
  /** Calls `listener` once, when the database answers again; returns the unsubscribe. */
  onReachable(listener: () => void): () => void;
}

export interface StorageEngine {
  readonly kind: "sqlite" | "postgres";
  /** The outage breaker of the database (PostgreSQL); absent where there is none (SQLite is a file). */
  readonly reachability?: Reachability;
  /**
   * Creates or updates tables and indexes to match `layout`, without losing data. An index added
   * to a table holding more documents than one build batch is built online after it returns
   * (`index-build.ts`): scans and counts on it fail with `503 INDEX_NOT_READY` until it is ready.
   */
  migrate(layout: StorageLayout, keysOf: KeyFunction): Promise<void>;
  /** The indexes still being built online, as far as this process knows; empty when all are ready. */
  buildingIndexes(): { table: string; index: string }[];
  /** Resolves once no online build is left (built here or by another process), or the engine closed. */
  indexesBuilt(): Promise<void>;
  /** Runs `fn` in a read snapshot. */
  read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in a serializable write transaction; commits if it resolves, rolls back if it
   * throws. Engines may run `fn` again after a serialization conflict, so it must not have
   * effects outside the transaction. `writeSet` gives the write set `fn` made (encoded by
   * `commit-log/payload.ts`; undefined when it wrote nothing), asked for after `fn` and before the
   * commit: an engine shared by several instances records it in the same transaction, so the
   * others learn of the commit even if a notification is lost.
   */
  write<T>(fn: (tx: WriteTransaction) => Promise<T>, writeSet?: () => string | undefined): Promise<T>;
  /**
   * Calls `listener` when another process or instance committed (the CLI, a second server).
   * `payload` is that commit's serialized write set when the engine can carry it, else undefined
   * (then every subscription must be re-checked).
   */
  onExternalCommit(listener: (payload?: string) => void): () => void;
  /**
   * Where other instances commit to the same database (PostgreSQL): resolves once every commit
   * made anywhere before the call has been delivered to the `onExternalCommit` listeners, so a
   * cached identity may be trusted; undefined when that is already so — e.g. `snapshot`, a read
   * begun after the request arrived, sees no commit this instance has not heard of — or when the
   * engine confirms it itself before `snapshot`'s read answers (running the read again if it
   * cannot). Absent where commits of others are only polled for (SQLite).
   */
  syncExternalCommits?(snapshot?: ReadTransaction): Promise<void> | undefined;
  /**
   * How commits of other instances reach this one, for /healthz: `listening` (a live LISTEN
   * connection), `reconnecting` (it failed its heartbeat; the commit log is polled meanwhile),
   * `polling` (notifications off). Absent where there are no other instances.
   */
  commitChannel?(): "listening" | "reconnecting" | "polling";
  /** Pooled connections handed out and requests waiting for one (metrics; where the engine pools). */
  poolUsage?(): { inUse: number; waiting: number };
  /**
   * Commits in the shared commit log not yet applied here: the log's head (read now) minus this
   * instance's cursor (metrics; where there is a commit log).
   */
  commitLag?(): Promise<number>;
  /** Cheap liveness check for /healthz. */
  ping(): Promise<void>;
  /** Query plan of a scan, for tests proving index use. */
  explainScan(request: ScanRequest): Promise<string>;
  close(): Promise<void>;
}
