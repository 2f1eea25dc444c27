/**
 * What differs between the SQL engines, and nothing else: placeholders, the key column type,
 * identifier length, catalog queries, how a scan's LIMIT and a count's index are written, the
 * backfill UPDATE, and when an online index build creates its SQL index. Statement building (`sql/statements.ts`) and the migration (`sql/migration.ts`)
 * are shared and ask the dialect only these questions.
 */
import { quote, type SqlNames, sqlNames } from "./names.ts";

/** One SQL statement and its parameters. */
export interface SqlRequest {
  sql: string;
  params?: unknown[];
}

/** A document's id and its new key column values, in the order of the columns being backfilled. */
export interface BackfilledRow {
  id: string;
  keys: Buffer[];
}

export interface SqlDialect {
  readonly names: SqlNames;
  /** Column type of the index keys; it must compare bytewise (memcmp). */
  readonly blobType: string;
  /** Placeholder of the `n`-th parameter, counting from 1. */
  param(n: number): string;
  /** Whether a scan writes `limit` into its SQL instead of binding it. */
  inlineLimit(limit: number): boolean;
  /** The FROM clause of an index range count. */
  countSource(table: string, index: string): string;
  /** Rows `{ tbl, col }`: every column of every table. */
  readonly columnsSql: string;
  /** Rows `{ name, tbl }`: every index and the table it belongs to. */
  readonly indexesSql: string;
  /**
   * Statements storing backfilled keys of `rows` into the key columns of `indexes`, where those
   * are still empty: a write during an online build already stored the key of its document.
   */
  backfill(table: string, indexes: string[], rows: BackfilledRow[]): SqlRequest[];
  /**
   * The SQL index an online build creates with its key column, maintained by every batch and
   * write from then on (SQLite: partial, over the filled keys; building it holds the one writer
   * for a table scan only, where a full index would hold it for the sort of every key); null when
   * the build creates it once the column is filled (PostgreSQL: `CREATE INDEX CONCURRENTLY`).
   */
  indexAtBuildStart(table: string, index: string): SqlRequest | null;
}

const sqliteNames = sqlNames();

export const sqliteDialect: SqlDialect = {
  names: sqliteNames,
  blobType: "BLOB",
  param: () => "?",
  /**
   * SQLite re-prepares a statement on every run when a bound LIMIT parameter is rebound (the
   * planner reads its value), which doubles the cost of a point read, so common limits (small ones
   * and powers of two) are written into the SQL; a statement cache then holds at most a few
   * variants per scan shape.
   */
  inlineLimit: (limit) =>
    Number.isInteger(limit) && limit > 0 && (limit <= 8 || (limit <= 1024 && (limit & (limit - 1)) === 0)),
  // Named explicitly: counting must walk the key index, not whichever index the planner guesses.
  countSource: (table, index) =>
    `${quote(sqliteNames.table(table))} INDEXED BY ${quote(sqliteNames.index(table, index))}`,
  columnsSql: `SELECT m.name AS tbl, c.name AS col FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table'`,
  indexesSql: `SELECT name, tbl_name AS tbl FROM sqlite_master WHERE type = 'index'`,
  backfill(table, indexes, rows) {
    const sets = indexes.map((n) => `${quote(sqliteNames.keyColumn(n))} = ?`).join(", ");
    const empty = indexes.map((n) => ` AND ${quote(sqliteNames.keyColumn(n))} IS NULL`).join("");
    const sql = `UPDATE ${quote(sqliteNames.table(table))} SET ${sets} WHERE id = ?${empty}`;
    return rows.map((r) => ({ sql, params: [...r.keys, r.id] }));
  },
  indexAtBuildStart(table, index) {
    const column = quote(sqliteNames.keyColumn(index));
    return {
      sql: `CREATE INDEX IF NOT EXISTS ${quote(sqliteNames.index(table, index))} ON ${quote(sqliteNames.table(table))} (${column}) WHERE ${column} IS NOT NULL`,
    };
  },
};

/** PostgreSQL truncates identifiers to 63 bytes. */
const postgresNames = sqlNames(63);

export const postgresDialect: SqlDialect = {
  names: postgresNames,
  blobType: "BYTEA",
  param: (n) => `$${n}`,
  // Bound: PostgreSQL plans a named prepared statement once, whatever the limit.
  inlineLimit: () => false,
  countSource: (table) => quote(postgresNames.table(table)),
  columnsSql:
    "SELECT table_name AS tbl, column_name AS col FROM information_schema.columns WHERE table_schema = current_schema()",
  indexesSql:
    "SELECT indexname AS name, tablename AS tbl FROM pg_indexes WHERE schemaname = current_schema()",
  /** One statement per batch: the keys travel as arrays and are joined back on id. */
  backfill(table, indexes, rows) {
    const t = quote(postgresNames.table(table));
    const sets = indexes.map((n, i) => `${quote(postgresNames.keyColumn(n))} = v.k${i}`).join(", ");
    const unnest = indexes.map((_, i) => `$${i + 2}::bytea[]`).join(", ");
    const aliases = indexes.map((_, i) => `k${i}`).join(", ");
    const empty = indexes.map((n) => ` AND ${t}.${quote(postgresNames.keyColumn(n))} IS NULL`).join("");
    const sql = `UPDATE ${t} SET ${sets} FROM unnest($1::text[], ${unnest}) AS v(id, ${aliases}) WHERE ${t}.id = v.id${empty}`;
    return [{ sql, params: [rows.map((r) => r.id), ...indexes.map((_, i) => rows.map((r) => r.keys[i]))] }];
  },
  indexAtBuildStart: () => null,
};
