/**
 * The SQL of document reads and writes, built once for every SQL engine from its dialect.
 * Documents are stored as JSON text (see `postgres/engine.ts` for why not JSONB) with one key column per
 * index; every statement text is memoized per table, so a hot point read builds no strings.
 */

import { indexNamesOf, type ScanRequest, type StorageLayout, type StoredDocument } from "../engine.ts";
import { BuildingIndexes } from "../indexes/building.ts";
import type { KeyRange } from "../indexes/key.ts";
import type { SqlDialect, SqlRequest } from "./dialect.ts";
import { quote } from "./names.ts";

export const encodeDocument = (doc: StoredDocument): string => JSON.stringify(doc);
export const decodeDocument = (text: string): StoredDocument => JSON.parse(text);

interface TableSql {
  get: string;
  delete: string;
  /** Parameters: id, document, then one key per index in `indexes` order. */
  insert: string;
  /** Parameters: document, one key per index in `indexes` order, then id. */
  replace: string;
  /** Index names of the key columns; undefined when the table is not in the layout. */
  indexes: string[] | undefined;
}

export class SqlStatements {
  private readonly tables = new Map<string, TableSql>();

  /**
   * @param building the engine's indexes still being built, which scans and counts refuse
   *   (`index-build.ts`); shared by every transaction of the engine.
   */
  constructor(
    readonly dialect: SqlDialect,
    private readonly layout: StorageLayout,
    readonly building: BuildingIndexes = new BuildingIndexes(),
  ) {}

  /** The statements of `table`; its index names come from the layout (writes need them). */
  table(table: string): TableSql {
    let sql = this.tables.get(table);
    if (!sql) {
      sql = this.build(table);
      this.tables.set(table, sql);
    }
    return sql;
  }

  private build(table: string): TableSql {
    const { names, param } = this.dialect;
    const t = quote(names.table(table));
    // Reads and deletes reach any stored table; writes only those of the layout (see `keysOf`).
    const indexes = Object.hasOwn(this.layout.tables, table) ? indexNamesOf(this.layout, table) : undefined;
    const keyColumns = (indexes ?? []).map((n) => quote(names.keyColumn(n)));
    const marks = keyColumns.map((_, i) => param(i + 3));
    const sets = keyColumns.map((c, i) => `${c} = ${param(i + 2)}`);
    return {
      get: `SELECT doc FROM ${t} WHERE id = ${param(1)}`,
      delete: `DELETE FROM ${t} WHERE id = ${param(1)}`,
      insert: `INSERT INTO ${t} (${["id", "doc", ...keyColumns].join(", ")}) VALUES (${[param(1), param(2), ...marks].join(", ")})`,
      replace: `UPDATE ${t} SET ${[`doc = ${param(1)}`, ...sets].join(", ")} WHERE id = ${param(keyColumns.length + 2)}`,
      indexes,
    };
  }

  /** Parameters of an insert of `doc` with index `keys`. */
  insertParams(table: string, doc: StoredDocument, keys: Record<string, Buffer>): unknown[] {
    return [doc._id, encodeDocument(doc), ...this.keysOf(table, keys)];
  }

  replaceParams(table: string, doc: StoredDocument, keys: Record<string, Buffer>): unknown[] {
    return [encodeDocument(doc), ...this.keysOf(table, keys), doc._id];
  }

  private keysOf(table: string, keys: Record<string, Buffer>): Buffer[] {
    const { indexes } = this.table(table);
    if (!indexes) throw new Error(`Unknown table "${table}"`);
    return indexes.map((n) => keys[n]);
  }

  /** The SQL of a range scan; an engine's `explainScan` explains exactly this statement. */
  scan(req: ScanRequest): string {
    const { names, param } = this.dialect;
    const col = quote(names.keyColumn(req.index));
    let n = 0;
    const where = rangeWhere(col, req.range, () => param(++n));
    const limit = this.dialect.inlineLimit(req.limit) ? String(req.limit) : param(++n);
    return `SELECT ${req.keys === false ? "" : `${col} AS key, `}doc FROM ${quote(names.table(req.table))} ${where} ORDER BY ${col} ${
      req.order === "desc" ? "DESC" : "ASC"
    } LIMIT ${limit}`;
  }

  /** The parameters of {@link scan}'s statement, in its placeholders' order. */
  scanParams(req: ScanRequest): unknown[] {
    const params: unknown[] = [];
    if (req.range.lower) params.push(req.range.lower);
    if (req.range.upper) params.push(req.range.upper);
    if (!this.dialect.inlineLimit(req.limit)) params.push(req.limit);
    return params;
  }

  /** Counts an index range: the statement's one row has the count in column `n`. */
  count(table: string, index: string, range: KeyRange): SqlRequest {
    const { names, param } = this.dialect;
    const params: unknown[] = [];
    if (range.lower) params.push(range.lower);
    if (range.upper) params.push(range.upper);
    let n = 0;
    const where = rangeWhere(quote(names.keyColumn(index)), range, () => param(++n));
    return { sql: `SELECT count(*) AS n FROM ${this.dialect.countSource(table, index)} ${where}`, params };
  }
}

/**
 * `WHERE` bounds of a key range (lower inclusive, upper exclusive); `next` gives each placeholder.
 * An unbounded range says `IS NOT NULL`, which every stored key is: SQLite may then read it from
 * the partial index an online build made (`SqlDialect.indexAtBuildStart`), which a bound implies.
 */
function rangeWhere(column: string, range: KeyRange, next: () => string): string {
  const parts: string[] = [];
  if (range.lower) parts.push(`${column} >= ${next()}`);
  if (range.upper) parts.push(`${column} < ${next()}`);
  return `WHERE ${parts.length ? parts.join(" AND ") : `${column} IS NOT NULL`}`;
}
