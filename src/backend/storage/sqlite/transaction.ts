/**
 * A transaction on one SQLite connection: the engine's reads and writes as cached prepared
 * statements (sqlite/connection.ts). The same reader serves pooled read snapshots and the writer's
 * own reads; the engine opens and ends the transactions (`BEGIN` … `COMMIT`, or the write lock's
 * `BEGIN IMMEDIATE`), these classes only run statements inside them.
 */
import type {
  ReadTransaction,
  ScannedRow,
  ScanRequest,
  StoredDocument,
  WriteTransaction,
} from "../engine.ts";
import { isBuildingSql } from "../indexes/build.ts";
import type { KeyRange } from "../indexes/key.ts";
import { sqliteDialect } from "../sql/dialect.ts";
import { decodeDocument } from "../sql/statements.ts";
import type { SqliteConnection } from "./connection.ts";

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
export class SqliteReader implements ReadTransaction {
  constructor(protected readonly conn: SqliteConnection) {}

  /** The connection this snapshot reads on (cluster mode asks it for the log's head). */
  get connection(): SqliteConnection {
    return this.conn;
  }

  async get(table: string, id: string): Promise<StoredDocument | null> {
    const row = this.conn.stmts.get(this.conn.sql.table(table).get).get(id) as { doc: string } | undefined;
    return row ? decodeDocument(row.doc) : null;
  }

  /** Refuses a scan or count of an index still being built (`building-indexes.ts`). */
  private checkBuilt(table: string, index: string): void {
    const { building } = this.conn.sql;
    if (building.size === 0 || !building.has(table, index)) return;
    const row = this.conn.stmts.get(isBuildingSql(sqliteDialect)).get(table, index);
    building.refuseWhileBuilding(table, index, row !== undefined);
  }

  /** Answers at once (better-sqlite3 is synchronous): no promise for the query to wait on. */
  scan<Keys extends boolean = true>(req: ScanRequest<Keys>): ScannedRow<Keys>[] {
    this.checkBuilt(req.table, req.index);
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
    this.checkBuilt(table, index);
    const { sql, params = [] } = this.conn.sql.count(table, index, range);
    return (this.conn.stmts.get(sql).get(params) as { n: number }).n;
  }
}

/** The writer connection's transaction: the reads above plus inserts, replacements and deletions. */
export class SqliteWriter extends SqliteReader implements WriteTransaction {
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
