/**
 * A transaction on one PostgreSQL connection: the engine's reads and writes as statements, named
 * prepared statements (each connection parses and plans a statement text once), and what went
 * wrong, so the transaction loop (postgres-transaction-loop.ts) can decide whether to run again.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { APPEND_SQL } from "./commit-log.ts";
import { isConflict, isConnectionFault } from "./db-errors.ts";
import type { ReadTransaction, ScannedRow, ScanRequest, StoredDocument, WriteTransaction } from "./engine.ts";
import type { KeyRange } from "./index-key.ts";
import { decodeDocument, type SqlStatements } from "./sql-statements.ts";

const statementNames = new Map<string, string>();
/** Named prepared statement for `text`: each connection parses and plans it once. */
function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (!name) {
    name = `sa_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

export class PgReader implements ReadTransaction {
  /** Set when a statement hit a serialization failure: the transaction is doomed and retryable. */
  conflicted = false;
  /** Set when a statement failed because the connection is lost or the server did not answer. */
  fault?: unknown;
  /** The newest commit log number this snapshot sees (read snapshots only). */
  logHead?: number;

  constructor(
    protected readonly client: pg.PoolClient,
    protected readonly sql: SqlStatements,
  ) {}

  protected async run<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    try {
      return await this.client.query<R>(prepared(text, values));
    } catch (error) {
      // Application code may catch this error and go on; the outcome must not depend on it.
      if (isConflict(error)) this.conflicted = true;
      else if (isConnectionFault(error)) this.fault ??= error;
      throw error;
    }
  }

  async get(table: string, id: string): Promise<StoredDocument | null> {
    const { rows } = await this.run<{ doc: string }>(this.sql.table(table).get, [id]);
    return rows.length ? decodeDocument(rows[0].doc) : null;
  }

  async scan<Keys extends boolean = true>(req: ScanRequest<Keys>): Promise<ScannedRow<Keys>[]> {
    const { rows } = await this.run<{ key?: Buffer; doc: string }>(
      this.sql.scan(req),
      this.sql.scanParams(req),
    );
    if (req.keys === false) return rows.map((r) => ({ doc: decodeDocument(r.doc) })) as ScannedRow<Keys>[];
    return rows.map((r) => ({ key: r.key, doc: decodeDocument(r.doc) })) as ScannedRow<Keys>[];
  }

  async count(table: string, index: string, range: KeyRange): Promise<number> {
    const { sql, params = [] } = this.sql.count(table, index, range);
    const { rows } = await this.run<{ n: string }>(sql, params);
    return Number(rows[0].n);
  }
}

export class PgWriter extends PgReader implements WriteTransaction {
  async insert(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void> {
    await this.run(this.sql.table(table).insert, this.sql.insertParams(table, doc, keys));
  }

  async replace(table: string, doc: StoredDocument, keys: Record<string, Buffer>): Promise<void> {
    const result = await this.run(this.sql.table(table).replace, this.sql.replaceParams(table, doc, keys));
    if (result.rowCount !== 1) throw new Error(`Document ${doc._id} not found in "${table}"`);
  }

  async delete(table: string, id: string): Promise<void> {
    await this.run(this.sql.table(table).delete, [id]);
  }

  /** Appends the commit log row of this transaction (see commit-log.ts); returns its number. */
  async appendLog(origin: string, writes: string | null): Promise<number> {
    const { rows } = await this.run<{ seq: string }>(APPEND_SQL, [origin, writes]);
    return Number(rows[0].seq);
  }
}
