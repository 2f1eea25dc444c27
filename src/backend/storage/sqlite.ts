/**
 * Embedded storage on better-sqlite3 (WAL). One writer connection takes mutations one at a time;
 * reads use a small pool of reader connections, each read in its own snapshot (BEGIN … COMMIT),
 * so a query never sees a half-applied mutation and never blocks the writer.
 *
 * The statements and the layout migration are shared with PostgreSQL (`sql-statements.ts`,
 * `sql-migration.ts`, `sqliteDialect` in `sql-dialect.ts`); this file owns connections,
 * statement caching and transactions.
 */
import { randomUUID } from "node:crypto";
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { logger } from "../logger.ts";
import { CommitFollower } from "./commit-follower.ts";
import { COMMIT_LOG_TABLE, MAX_LOGGED_BYTES } from "./commit-log.ts";
import { DatabaseOpenError, databaseBusy, isBusy } from "./db-errors.ts";
import type {
  KeyFunction,
  ReadTransaction,
  ScannedRow,
  ScanRequest,
  StorageEngine,
  StorageLayout,
  StoredDocument,
  WriteTransaction,
} from "./engine.ts";
import type { KeyRange } from "./index-key.ts";
import { sqliteDialect } from "./sql-dialect.ts";
import { migrationProgram, pendingMigration, type Rows, runSync } from "./sql-migration.ts";
import { decodeDocument, SqlStatements } from "./sql-statements.ts";
import {
  DEFAULT_LOG_KEEP,
  PRUNE_EVERY,
  SQLITE_APPEND_SQL,
  SQLITE_FOLLOWER_STATEMENTS,
  SQLITE_LOG_SCHEMA,
  SQLITE_PRUNE_UPTO_SQL,
  SQLITE_SNAPSHOT_HEAD_SQL,
  type SqliteCommitLogOptions,
} from "./sqlite-commit-log.ts";

type DB = Database.Database;
type Stmt = Database.Statement;

export interface SqliteOptions {
  /** Path of the database file, or ":memory:" (tests only: no second connection can see it). */
  filename: string;
  /** `NORMAL` (default) survives process crashes; `FULL` also survives power loss. */
  synchronous?: "NORMAL" | "FULL";
  /** How often to look for commits by other processes (CLI), in ms. */
  pollIntervalMs?: number;
  /**
   * How long a mutation waits for a write lock held by another process (a CLI run, a `sqlite3`
   * shell) before it fails with `503 DATABASE_BUSY`, in ms (default 5000). The wait is
   * asynchronous: the event loop keeps serving meanwhile.
   */
  busyTimeoutMs?: number;
  /**
   * Cluster mode: several server processes share the file. Every commit is logged in its own
   * transaction and announced through `wakeups`; a request trusts a cached identity only once
   * this process has applied every commit its read snapshot sees (`sqlite-commit-log.ts`).
   * Absent (the default): one server process, no log, the write path as fast as without.
   */
  commitLog?: SqliteCommitLogOptions;
}

/** Default of {@link SqliteOptions.busyTimeoutMs}. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Prepared statements for one connection, keyed by SQL text. */
class StatementCache {
  private readonly cache = new Map<string, Stmt>();
  constructor(private readonly db: DB) {}
  get(sql: string): Stmt {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}

class Connection {
  readonly db: DB;
  readonly stmts: StatementCache;
  /** Scan statements by table, index and `scanVariant`: a repeated scan neither builds nor hashes its SQL. */
  readonly scans = new Map<string, Map<string, Map<number, Stmt>>>();
  /** Statements run once per read transaction. */
  readonly begin: Stmt;
  readonly commit: Stmt;
  /** Statement texts; reads need no layout, the writer's gets the migrated one. */
  sql = new SqlStatements(sqliteDialect, { tables: {} });
  /** The connection's reader; it holds no state of its own, so every read can share it. */
  readonly reader: SqliteReader;
  constructor(filename: string, synchronous: string, readonly: boolean) {
    this.db = new Database(filename, { fileMustExist: readonly });
    // No busy_timeout: SQLite would wait for another process's lock inside a synchronous call,
    // freezing the event loop. Writers wait asynchronously instead (`acquireWriteLock`); WAL
    // readers never wait for a writer.
    this.db.pragma("busy_timeout = 0");
    if (!readonly) this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${synchronous}`);
    this.db.defaultSafeIntegers(false);
    this.stmts = new StatementCache(this.db);
    this.begin = this.stmts.get("BEGIN");
    this.commit = this.stmts.get("COMMIT");
    this.reader = new SqliteReader(this);
  }
}

/**
 * Identifies, within one table and index, the SQL `SqlStatements.scan` builds for a request:
 * flags for the key column, order and bounds, then the inlined limit (0 when bound).
 */
function scanVariant(req: ScanRequest): number {
  const flags =
    (req.keys === false ? 0 : 1) |
    (req.order === "desc" ? 2 : 0) |
    (req.range.lower ? 4 : 0) |
    (req.range.upper ? 8 : 0);
  return (sqliteDialect.inlineLimit(req.limit) ? req.limit : 0) * 16 + flags;
}

/** Read operations shared by reader and writer connections. */
class SqliteReader implements ReadTransaction {
  constructor(protected readonly conn: Connection) {}

  /** The connection this snapshot reads on (cluster mode asks it for the log's head). */
  get connection(): Connection {
    return this.conn;
  }

  async get(table: string, id: string): Promise<StoredDocument | null> {
    const row = this.conn.stmts.get(this.conn.sql.table(table).get).get(id) as { doc: string } | undefined;
    return row ? decodeDocument(row.doc) : null;
  }

  async scan<Keys extends boolean = true>(req: ScanRequest<Keys>): Promise<ScannedRow<Keys>[]> {
    let byIndex = this.conn.scans.get(req.table);
    if (!byIndex) this.conn.scans.set(req.table, (byIndex = new Map()));
    let variants = byIndex.get(req.index);
    if (!variants) byIndex.set(req.index, (variants = new Map()));
    const variant = scanVariant(req);
    let stmt = variants.get(variant);
    if (!stmt) {
      // Prepared here rather than through the text cache: a documents-only scan plucks its column.
      stmt = this.conn.db.prepare(this.conn.sql.scan(req));
      if (req.keys === false) stmt.pluck();
      variants.set(variant, stmt);
    }
    const params = this.conn.sql.scanParams(req);
    if (req.keys === false) {
      const docs = stmt.all(params) as string[];
      const out = new Array<ScannedRow<false>>(docs.length);
      for (let i = 0; i < docs.length; i++) out[i] = { doc: decodeDocument(docs[i]) };
      return out as ScannedRow<Keys>[];
    }
    const rows = stmt.all(params) as { key: Buffer; doc: string }[];
    const out = new Array<ScannedRow>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = { key: rows[i].key, doc: decodeDocument(rows[i].doc) };
    return out as ScannedRow<Keys>[];
  }

  async count(table: string, index: string, range: KeyRange): Promise<number> {
    const { sql, params = [] } = this.conn.sql.count(table, index, range);
    return (this.conn.stmts.get(sql).get(params) as { n: number }).n;
  }
}

class SqliteWriter extends SqliteReader implements WriteTransaction {
  async insert(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void> {
    const { sql } = this.conn;
    this.conn.stmts.get(sql.table(table).insert).run(sql.insertParams(table, doc, keys));
  }

  async replace(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void> {
    const { sql } = this.conn;
    const info = this.conn.stmts.get(sql.table(table).replace).run(sql.replaceParams(table, doc, keys));
    if (info.changes !== 1) throw new Error(`Document ${doc._id} not found in "${table}"`);
  }

  async delete(table: string, id: string): Promise<void> {
    this.conn.stmts.get(this.conn.sql.table(table).delete).run(id);
  }
}

/** A FIFO mutex: SQLite has one writer, so write transactions take turns. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const acquired = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return acquired;
  }
}

export class SqliteEngine implements StorageEngine {
  readonly kind = "sqlite" as const;
  private readonly writer: Connection;
  private readonly idleReaders: Connection[] = [];
  private readonly allReaders: Connection[] = [];
  private readonly writeLock = new Mutex();
  private readonly listeners = new Set<(payload?: string) => void>();
  private pollTimer?: NodeJS.Timeout;
  private lastDataVersion = 0;
  private closed = false;
  /** A wait for another process's write lock has been logged and has not ended yet. */
  private waitingLogged = false;
  /** Cluster mode's commit log; undefined for a single server process. */
  private readonly log?: ClusterLog;
  /**
   * Where this process appends its commits: cluster mode's log, or — in a process outside the
   * cluster (the CLI) on a database that has a log — the same log without following it, so the
   * workers learn its exact write sets instead of re-checking everything.
   */
  private logWriter?: LogWriter;
  /** Cluster mode: other workers' commits arrive as wake-ups through the primary (for /healthz). */
  readonly commitChannel?: () => "listening";

  private readonly busyTimeoutMs: number;

  /** Opens the file; one that cannot be opened throws a {@link DatabaseOpenError} naming the reason. */
  constructor(private readonly options: SqliteOptions) {
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    try {
      if (options.filename !== ":memory:") mkdirSync(dirname(options.filename), { recursive: true });
      this.writer = new Connection(options.filename, options.synchronous ?? "NORMAL", false);
    } catch (error) {
      throw new DatabaseOpenError(options.filename, whyUnopenable(options.filename, error));
    }
    if (options.commitLog) {
      this.log = this.clusterLog(options.commitLog);
      this.commitChannel = () => "listening";
    }
  }

  private clusterLog(settings: SqliteCommitLogOptions): ClusterLog {
    if (this.options.filename === ":memory:")
      throw new Error("cluster mode needs a database file, not :memory:");
    // Its own connection, reading outside any transaction: it sees every commit made before it reads.
    const conn = new Connection(this.options.filename, this.options.synchronous ?? "NORMAL", true);
    const follower = new CommitFollower({
      query: async (sql, params) => conn.stmts.get(sql).all(params ?? []) as Record<string, unknown>[],
      pollIntervalMs: settings.pollIntervalMs ?? 500,
      keep: settings.keep,
      pruneIntervalMs: 0,
      statements: SQLITE_FOLLOWER_STATEMENTS,
    });
    const log: ClusterLog = {
      settings,
      conn,
      follower,
      instanceId: randomUUID(),
      commits: 0,
      keep: settings.keep ?? DEFAULT_LOG_KEEP,
      heard: false,
      missed: false,
    };
    follower.onCommit((payload) => {
      log.heard = true;
      this.emitExternal(payload);
    });
    return log;
  }

  /** Tells the external-commit listeners; one arriving with nobody listening is re-checked later. */
  private emitExternal(payload?: string): void {
    if (this.listeners.size === 0) {
      if (this.log) this.log.missed = true;
      return;
    }
    for (const l of this.listeners) {
      try {
        l(payload);
      } catch (error) {
        logger.error("external commit listener failed", { error: String(error) });
      }
    }
  }

  /**
   * Reads the recorded layout without any lock and compares; only when it differs takes the write
   * lock (waiting for another process as long as it takes, and saying which file is locked) and
   * migrates, re-reading the layout under the lock (another process may have migrated meanwhile).
   */
  async migrate(layout: StorageLayout, keysOf: KeyFunction): Promise<void> {
    const db = this.writer.db;
    const run = (prepared: Map<string, Stmt>) => (request: { sql: string; params?: unknown[] }) => {
      let stmt = prepared.get(request.sql);
      if (!stmt) prepared.set(request.sql, (stmt = db.prepare(request.sql)));
      if (stmt.reader) return stmt.all(request.params ?? []) as Rows;
      stmt.run(request.params ?? []);
      return [];
    };
    // A deferred read transaction: WAL readers never wait for another process's writer.
    const steps = db.transaction(() => runSync(pendingMigration(sqliteDialect, layout), run(new Map())))();
    if (steps === null || steps.length > 0) {
      const release = await this.writeLock.lock();
      try {
        await this.acquireWriteLock(Number.POSITIVE_INFINITY);
        try {
          runSync(migrationProgram(sqliteDialect, layout, keysOf), run(new Map()));
        } catch (error) {
          db.prepare("ROLLBACK").run();
          throw error;
        }
        db.prepare("COMMIT").run();
      } finally {
        release();
      }
    }
    this.writer.sql = new SqlStatements(sqliteDialect, layout);
    if (this.log) await this.startLog(this.log);
    else if (this.hasLogTable()) {
      this.logWriter = { instanceId: randomUUID(), commits: 0, keep: DEFAULT_LOG_KEEP };
    }
    this.lastDataVersion = this.dataVersion();
    this.startPolling();
  }

  private hasLogTable(): boolean {
    return (
      this.writer.db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(COMMIT_LOG_TABLE) !== undefined
    );
  }

  /** Creates the log table when missing (a write only then: it would wake every other process). */
  private async startLog(log: ClusterLog): Promise<void> {
    if (!this.hasLogTable()) {
      const release = await this.writeLock.lock();
      try {
        await this.acquireWriteLock(Number.POSITIVE_INFINITY);
        this.writer.db.prepare(SQLITE_LOG_SCHEMA).run();
        this.writer.commit.run();
      } finally {
        release();
      }
    }
    this.logWriter = log;
    await log.follower.start();
    log.unsubscribe = log.settings.wakeups.subscribe((seq) => log.follower.hint(seq, undefined));
  }

  private dataVersion(): number {
    return this.writer.db.pragma("data_version", { simple: true }) as number;
  }

  /** `PRAGMA data_version` changes only when another connection (another process) commits. */
  private startPolling(): void {
    if (this.pollTimer || this.options.filename === ":memory:") return;
    this.pollTimer = setInterval(() => {
      if (this.closed || this.listeners.size === 0) return;
      const version = this.dataVersion();
      if (version === this.lastDataVersion) return;
      this.lastDataVersion = version;
      const log = this.log;
      if (!log) {
        for (const l of this.listeners) l();
        return;
      }
      // Cluster mode: the other workers' commits are in the log. A change that brought no logged
      // commit since the last look came from outside the cluster (the CLI): re-check everything.
      log.follower.sync().then(
        () => {
          if (!log.heard) this.emitExternal(undefined);
          log.heard = false;
        },
        (error) => logger.warn("commit log unreadable", { error: String(error) }),
      );
    }, this.options.pollIntervalMs ?? 250);
    this.pollTimer.unref();
  }

  private takeReader(): Connection {
    const conn = this.idleReaders.pop();
    if (conn) return conn;
    if (this.options.filename === ":memory:") return this.writer;
    const created = new Connection(this.options.filename, this.options.synchronous ?? "NORMAL", true);
    this.allReaders.push(created);
    return created;
  }

  async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    const conn = this.takeReader();
    if (conn === this.writer) return fn(conn.reader);
    conn.begin.run();
    try {
      return await fn(conn.reader);
    } finally {
      conn.commit.run();
      this.idleReaders.push(conn);
    }
  }

  /**
   * `BEGIN IMMEDIATE` on the writer, retried with an asynchronous backoff while another process
   * holds the write lock; past `deadline` (ms since epoch) the caller gets `503 DATABASE_BUSY`.
   * The first wait is logged once, naming the file.
   */
  private async acquireWriteLock(deadline: number): Promise<void> {
    const begin = this.writer.stmts.get("BEGIN IMMEDIATE");
    for (let attempt = 0; ; attempt++) {
      try {
        begin.run();
        if (attempt > 0 && this.waitingLogged) {
          this.waitingLogged = false;
          logger.info("database write lock acquired", { file: this.options.filename });
        }
        return;
      } catch (error) {
        if (!isBusy(error)) throw error;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw databaseBusy();
      if (!this.waitingLogged) {
        this.waitingLogged = true;
        logger.warn("waiting for the database write lock held by another process", {
          file: this.options.filename,
        });
      }
      // 1, 2, 4 … 50 ms, jittered: short first waits, and polling stays cheap during a long lock.
      await sleep(Math.min(left, Math.min(50, 2 ** attempt) * (0.5 + Math.random() / 2)));
    }
  }

  async write<T>(fn: (tx: WriteTransaction) => Promise<T>, writeSet?: () => string | undefined): Promise<T> {
    // The deadline counts from the call: mutations queued behind a foreign lock do not each wait anew.
    const deadline = Date.now() + this.busyTimeoutMs;
    const release = await this.writeLock.lock();
    const conn = this.writer;
    let seq: number | undefined;
    let result: T;
    try {
      await this.acquireWriteLock(deadline);
      try {
        result = await fn(new SqliteWriter(conn));
        // From here to COMMIT nothing awaits: no other call sees the logged row uncommitted.
        if (this.logWriter) seq = this.appendLog(this.logWriter, writeSet?.());
      } catch (error) {
        conn.stmts.get("ROLLBACK").run();
        throw error;
      }
      conn.commit.run();
    } catch (error) {
      if (seq !== undefined) this.log?.follower.abandoned([seq]);
      throw error;
    } finally {
      release();
    }
    if (seq !== undefined) this.log?.settings.wakeups.publish(seq);
    return result;
  }

  /**
   * Logs this transaction's write set (see {@link logWriter}), now and then deleting the rows beyond
   * `keep` in the same transaction; returns the number drawn, or undefined when nothing was written.
   */
  private appendLog(log: LogWriter, payload: string | undefined): number | undefined {
    if (payload === undefined) return undefined;
    const writes = Buffer.byteLength(payload) > MAX_LOGGED_BYTES ? null : payload;
    const { stmts } = this.writer;
    const seq = Number(stmts.get(SQLITE_APPEND_SQL).run(log.instanceId, writes).lastInsertRowid);
    log.follower?.drew(seq);
    if (++log.commits % PRUNE_EVERY === 0) stmts.get(SQLITE_PRUNE_UPTO_SQL).run(seq - log.keep);
    return seq;
  }

  onExternalCommit(listener: (payload?: string) => void): () => void {
    this.listeners.add(listener);
    if (this.log?.missed) {
      this.log.missed = false;
      queueMicrotask(() => this.emitExternal(undefined));
    }
    return () => this.listeners.delete(listener);
  }

  /**
   * Cluster mode: nothing to wait for when this process has applied the newest commit `snapshot`
   * sees (the log's head, read in the snapshot: one indexed read), else one catch-up from the log.
   * Without a snapshot (mutations, socket connects) the head is read outside any transaction,
   * which sees every commit made before the call. A single process has nobody to wait for.
   */
  syncExternalCommits(snapshot?: ReadTransaction): Promise<void> | undefined {
    const log = this.log;
    if (!log) return undefined;
    const conn = snapshot instanceof SqliteReader ? snapshot.connection : log.conn;
    const head = conn.stmts.get(SQLITE_SNAPSHOT_HEAD_SQL).pluck().get() as number | undefined;
    if (head === undefined || head <= log.follower.position) return undefined;
    return log.follower.sync();
  }

  async ping(): Promise<void> {
    this.writer.stmts.get("SELECT 1").get();
  }

  async explainScan(req: ScanRequest): Promise<string> {
    const { sql } = this.writer;
    const rows = this.writer.db.prepare(`EXPLAIN QUERY PLAN ${sql.scan(req)}`).all(sql.scanParams(req)) as {
      detail: string;
    }[];
    return rows.map((r) => r.detail).join("\n");
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.log) {
      this.log.unsubscribe?.();
      this.log.follower.close();
      this.log.conn.db.close();
    }
    for (const r of this.allReaders) r.db.close();
    this.writer.db.close();
  }
}

/** What appending to the log needs. */
interface LogWriter {
  /** This process's origin in the log. */
  instanceId: string;
  /** Commits this process logged, counting towards the next pruning. */
  commits: number;
  /** Rows kept when pruning. */
  keep: number;
  /** Cluster mode: the number drawn is this process's own (never delivered back to it). */
  follower?: CommitFollower;
}

/** Cluster mode's state (see {@link SqliteOptions.commitLog}). */
interface ClusterLog extends LogWriter {
  settings: SqliteCommitLogOptions;
  /** The follower's connection. */
  conn: Connection;
  follower: CommitFollower;
  /** A logged commit of another process was delivered since the `data_version` poll last looked. */
  heard: boolean;
  /** A commit arrived before anyone listened: the first listener gets an unknown commit. */
  missed: boolean;
  unsubscribe?: () => void;
}

/** The reason, for an operator, why `filename` could not be opened as a database. */
function whyUnopenable(filename: string, error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  const dir = dirname(filename);
  try {
    if (statSync(filename).isDirectory()) return "it is a directory";
  } catch {
    // does not exist (yet): the directory must let us create it
  }
  if (code === "ENOTDIR" || code === "EEXIST") return `${dir} is not a directory`;
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return `the directory ${dir} is not writable (SQLite creates the file and its -wal and -shm files there)`;
  }
  try {
    accessSync(filename, constants.R_OK | constants.W_OK);
  } catch (e) {
    if ((e as { code?: unknown }).code === "EACCES") return "no permission to read and write it";
  }
  return `${message}${typeof code === "string" ? ` (${code})` : ""}`;
}
