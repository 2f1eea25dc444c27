/**
 * Embedded storage on better-sqlite3 (WAL). One writer connection takes mutations one at a time;
 * reads use a small pool of reader connections, each read in its own snapshot (BEGIN … COMMIT),
 * so a query never sees a half-applied mutation and never blocks the writer.
 *
 * The statements and the layout migration are shared with PostgreSQL (`sql-statements.ts`,
 * `sql-migration.ts`, `sqliteDialect` in `sql-dialect.ts`); this file owns connections,
 * statement caching and transactions.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
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
import { migrationProgram, type Rows, runSync } from "./sql-migration.ts";
import { decodeDocument, SqlStatements } from "./sql-statements.ts";

type DB = Database.Database;
type Stmt = Database.Statement;

export interface SqliteOptions {
  /** Path of the database file, or ":memory:" (tests only: no second connection can see it). */
  filename: string;
  /** `NORMAL` (default) survives process crashes; `FULL` also survives power loss. */
  synchronous?: "NORMAL" | "FULL";
  /** How often to look for commits by other processes (CLI), in ms. */
  pollIntervalMs?: number;
}

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
    // busy_timeout first: even switching to WAL needs a lock another process may hold.
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("journal_mode = WAL");
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

  constructor(private readonly options: SqliteOptions) {
    if (options.filename !== ":memory:") mkdirSync(dirname(options.filename), { recursive: true });
    this.writer = new Connection(options.filename, options.synchronous ?? "NORMAL", false);
  }

  async migrate(layout: StorageLayout, keysOf: KeyFunction): Promise<void> {
    const db = this.writer.db;
    // IMMEDIATE: take the write lock before reading `_layout`, so a server and a CLI starting at
    // once queue on busy_timeout instead of failing to upgrade a read lock ("database is locked").
    db.transaction(() => {
      const prepared = new Map<string, Stmt>();
      runSync(migrationProgram(sqliteDialect, layout, keysOf), ({ sql, params = [] }) => {
        let stmt = prepared.get(sql);
        if (!stmt) prepared.set(sql, (stmt = db.prepare(sql)));
        if (stmt.reader) return stmt.all(params) as Rows;
        stmt.run(params);
        return [];
      });
    }).immediate();
    this.writer.sql = new SqlStatements(sqliteDialect, layout);
    this.lastDataVersion = this.dataVersion();
    this.startPolling();
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
      if (version !== this.lastDataVersion) {
        this.lastDataVersion = version;
        for (const l of this.listeners) l();
      }
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

  async write<T>(fn: (tx: WriteTransaction) => Promise<T>): Promise<T> {
    const release = await this.writeLock.lock();
    const conn = this.writer;
    try {
      conn.stmts.get("BEGIN IMMEDIATE").run();
      let result: T;
      try {
        result = await fn(new SqliteWriter(conn));
      } catch (error) {
        conn.stmts.get("ROLLBACK").run();
        throw error;
      }
      conn.commit.run();
      return result;
    } finally {
      release();
    }
  }

  onExternalCommit(listener: (payload?: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
    for (const r of this.allReaders) r.db.close();
    this.writer.db.close();
  }
}
