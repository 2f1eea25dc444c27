/**
 * Embedded storage on better-sqlite3 (WAL). One writer connection takes mutations one at a time;
 * reads use a small pool of reader connections, each read in its own snapshot (BEGIN … COMMIT),
 * so a query never sees a half-applied mutation and never blocks the writer.
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
import { indexNamesOf } from "./engine.ts";
import type { KeyRange } from "./index-key.ts";

type DB = Database.Database;
type Stmt = Database.Statement;

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const tableName = (t: string) => `t_${t}`;
const keyColumn = (index: string) => `k_${index}`;

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

function rangeSql(column: string, range: KeyRange, params: unknown[]): string {
  const parts: string[] = [];
  if (range.lower) {
    parts.push(`${column} >= ?`);
    params.push(range.lower);
  }
  if (range.upper) {
    parts.push(`${column} < ?`);
    params.push(range.upper);
  }
  return parts.length ? `WHERE ${parts.join(" AND ")}` : "";
}

/** The SQL of a range scan; `explainScan` explains exactly this statement. */
function scanSql(req: ScanRequest, params: unknown[]): string {
  const col = q(keyColumn(req.index));
  const where = rangeSql(col, req.range, params);
  return `SELECT ${req.keys === false ? "" : `${col} AS key, `}doc FROM ${q(tableName(req.table))} ${where} ORDER BY ${col} ${
    req.order === "desc" ? "DESC" : "ASC"
  } LIMIT ${limitSql(req.limit, params)}`;
}

/**
 * The LIMIT clause's value. SQLite re-prepares a statement on every run when a bound LIMIT
 * parameter is rebound (the planner reads its value), which doubles the cost of a point read, so
 * common limits (small ones and powers of two) are written into the SQL; the statement cache
 * then holds at most a few variants per scan shape.
 */
function limitSql(limit: number, params: unknown[]): string {
  if (limitIsInlined(limit)) return String(limit);
  params.push(limit);
  return "?";
}

function limitIsInlined(limit: number): boolean {
  return (
    Number.isInteger(limit) && limit > 0 && (limit <= 8 || (limit <= 1024 && (limit & (limit - 1)) === 0))
  );
}

/**
 * Identifies, within one table and index, the SQL `scanSql` builds for a request: flags for the
 * key column, order and bounds, then the inlined limit (0 when bound as a parameter).
 */
function scanVariant(req: ScanRequest): number {
  const flags =
    (req.keys === false ? 0 : 1) |
    (req.order === "desc" ? 2 : 0) |
    (req.range.lower ? 4 : 0) |
    (req.range.upper ? 8 : 0);
  return (limitIsInlined(req.limit) ? req.limit : 0) * 16 + flags;
}

function parseDoc(row: { doc: string }): StoredDocument {
  return JSON.parse(row.doc);
}

/** Read operations shared by reader and writer connections. */
class SqliteReader implements ReadTransaction {
  constructor(protected readonly conn: Connection) {}

  async get(table: string, id: string): Promise<StoredDocument | null> {
    const row = this.conn.stmts.get(`SELECT doc FROM ${q(tableName(table))} WHERE id = ?`).get(id) as
      | { doc: string }
      | undefined;
    return row ? parseDoc(row) : null;
  }

  async scan<Keys extends boolean = true>(req: ScanRequest<Keys>): Promise<ScannedRow<Keys>[]> {
    let byIndex = this.conn.scans.get(req.table);
    if (!byIndex) this.conn.scans.set(req.table, (byIndex = new Map()));
    let variants = byIndex.get(req.index);
    if (!variants) byIndex.set(req.index, (variants = new Map()));
    const variant = scanVariant(req);
    const params: unknown[] = [];
    let stmt = variants.get(variant);
    if (stmt) {
      // The same parameters, in the same order, as `scanSql` pushes them.
      if (req.range.lower) params.push(req.range.lower);
      if (req.range.upper) params.push(req.range.upper);
      if (!limitIsInlined(req.limit)) params.push(req.limit);
    } else {
      // Prepared here rather than through the text cache: a documents-only scan plucks its column.
      stmt = this.conn.db.prepare(scanSql(req, params));
      if (req.keys === false) stmt.pluck();
      variants.set(variant, stmt);
    }
    if (req.keys === false) {
      const docs = stmt.all(params) as string[];
      const out = new Array<ScannedRow<false>>(docs.length);
      for (let i = 0; i < docs.length; i++) out[i] = { doc: JSON.parse(docs[i]) };
      return out as ScannedRow<Keys>[];
    }
    const rows = stmt.all(params) as { key: Buffer; doc: string }[];
    const out = new Array<ScannedRow>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = { key: rows[i].key, doc: parseDoc(rows[i]) };
    return out as ScannedRow<Keys>[];
  }

  async count(table: string, index: string, range: KeyRange): Promise<number> {
    const col = q(keyColumn(index));
    const params: unknown[] = [];
    const where = rangeSql(col, range, params);
    const row = this.conn.stmts
      .get(`SELECT count(*) AS n FROM ${q(tableName(table))} INDEXED BY ${q(`i_${table}_${index}`)} ${where}`)
      .get(...params) as { n: number };
    return row.n;
  }
}

class SqliteWriter extends SqliteReader implements WriteTransaction {
  constructor(
    conn: Connection,
    private readonly layout: StorageLayout,
  ) {
    super(conn);
  }

  private indexNames(table: string): string[] {
    return indexNamesOf(this.layout, table);
  }

  async insert(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void> {
    const names = this.indexNames(table);
    const cols = ["id", "doc", ...names.map(keyColumn)].map(q).join(", ");
    const marks = names.map(() => "?").join(", ");
    this.conn.stmts
      .get(`INSERT INTO ${q(tableName(table))} (${cols}) VALUES (?, ?, ${marks})`)
      .run(doc._id, JSON.stringify(doc), ...names.map((n) => keys[n]));
  }

  async replace(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void> {
    const names = this.indexNames(table);
    const sets = ["doc = ?", ...names.map((n) => `${q(keyColumn(n))} = ?`)].join(", ");
    const info = this.conn.stmts
      .get(`UPDATE ${q(tableName(table))} SET ${sets} WHERE id = ?`)
      .run(JSON.stringify(doc), ...names.map((n) => keys[n]), doc._id);
    if (info.changes !== 1) throw new Error(`Document ${doc._id} not found in "${table}"`);
  }

  async delete(table: string, id: string): Promise<void> {
    this.conn.stmts.get(`DELETE FROM ${q(tableName(table))} WHERE id = ?`).run(id);
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
  private layout: StorageLayout = { tables: {} };
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
      db.exec(`CREATE TABLE IF NOT EXISTS "_layout" (tbl TEXT PRIMARY KEY, indexes TEXT NOT NULL)`);
      const known = new Map(
        (db.prepare(`SELECT tbl, indexes FROM "_layout"`).all() as { tbl: string; indexes: string }[]).map(
          (r) => [r.tbl, JSON.parse(r.indexes) as Record<string, string[]>],
        ),
      );
      for (const [table, def] of Object.entries(layout.tables)) {
        const t = q(tableName(table));
        db.exec(
          `CREATE TABLE IF NOT EXISTS ${t} (id TEXT PRIMARY KEY, doc TEXT NOT NULL, ${q(keyColumn("by_creation_time"))} BLOB NOT NULL)`,
        );
        db.exec(
          `CREATE INDEX IF NOT EXISTS ${q(`i_${table}_by_creation_time`)} ON ${t} (${q(keyColumn("by_creation_time"))})`,
        );
        const before = known.get(table) ?? {};
        const columns = new Set(
          (db.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name),
        );
        const wanted = new Map(def.indexes.map((i) => [i.name, i.fields]));
        // Drop indexes that disappeared or changed their fields; (re)build the rest.
        for (const [name, fields] of Object.entries(before)) {
          const now = wanted.get(name);
          if (!now || JSON.stringify(now) !== JSON.stringify(fields)) {
            db.exec(`DROP INDEX IF EXISTS ${q(`i_${table}_${name}`)}`);
            if (columns.has(keyColumn(name))) {
              db.exec(`ALTER TABLE ${t} DROP COLUMN ${q(keyColumn(name))}`);
              columns.delete(keyColumn(name));
            }
          }
        }
        const backfill: string[] = [];
        for (const { name } of def.indexes) {
          if (!columns.has(keyColumn(name))) {
            db.exec(`ALTER TABLE ${t} ADD COLUMN ${q(keyColumn(name))} BLOB`);
            backfill.push(name);
          }
        }
        if (backfill.length) {
          const update = db.prepare(
            `UPDATE ${t} SET ${backfill.map((n) => `${q(keyColumn(n))} = ?`).join(", ")} WHERE id = ?`,
          );
          for (const row of db.prepare(`SELECT doc FROM ${t}`).all() as { doc: string }[]) {
            const doc = JSON.parse(row.doc) as StoredDocument;
            const keys = keysOf(table, doc);
            update.run(...backfill.map((n) => keys[n]), doc._id);
          }
        }
        for (const { name } of def.indexes) {
          db.exec(`CREATE INDEX IF NOT EXISTS ${q(`i_${table}_${name}`)} ON ${t} (${q(keyColumn(name))})`);
        }
        db.prepare(`INSERT OR REPLACE INTO "_layout" (tbl, indexes) VALUES (?, ?)`).run(
          table,
          JSON.stringify(Object.fromEntries(wanted)),
        );
      }
    }).immediate();
    this.layout = layout;
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
        result = await fn(new SqliteWriter(conn, this.layout));
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

  async publishCommit(): Promise<void> {
    // Other processes notice SQLite commits through `data_version`; nothing to send.
  }

  async ping(): Promise<void> {
    this.writer.stmts.get("SELECT 1").get();
  }

  async explainScan(req: ScanRequest): Promise<string> {
    const params: unknown[] = [];
    const sql = scanSql(req, params);
    const rows = this.writer.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
    return rows.map((r) => r.detail).join("\n");
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const r of this.allReaders) r.db.close();
    this.writer.db.close();
  }
}
