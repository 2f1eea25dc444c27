/**
 * A transaction on one PostgreSQL connection: the engine's reads and writes as statements, named
 * prepared statements (each connection parses and plans a statement text once), and what went
 * wrong, so the transaction loop (postgres/transaction-loop.ts) can decide whether to run again.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import { APPEND_SQL } from "../commit-log/log.ts";
import { isConflict, isConnectionFault } from "../db-errors.ts";
import type {
  ReadTransaction,
  ScannedRow,
  ScanRequest,
  StoredDocument,
  WriteTransaction,
} from "../engine.ts";
import { isBuildingSql } from "../indexes/build.ts";
import type { KeyRange } from "../indexes/key.ts";
import { postgresDialect } from "../sql/dialect.ts";
import { decodeDocument, type SqlStatements } from "../sql/statements.ts";
import { isServerReadOnly } from "./primary-locator.ts";

const statementNames = new Map<string, string>();
/** The prepared statement name of `text`: each connection parses and plans it once. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `sa_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * Sends `text` as a named prepared statement. The query is made from its text, values and callback
 * and named afterwards, not from a `{ name, text, values }` config: pg (8.23) copies a config
 * object descriptor by descriptor before reading it (`cloneQueryConfig`, 1.1 µs a statement
 * against 0.04 µs; node-postgres pull request 3743 drops the copy), and a mutation sends two.
 */
function sendPrepared<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  return new Promise((resolve, reject) => {
    const query = new pg.Query<R>(text, values, (error, result) =>
      error ? reject(error) : resolve(result as pg.QueryResult<R>),
    );
    (query as unknown as { name: string }).name = statementName(text);
    client.query(query);
  });
}

export class PgReader implements ReadTransaction {
  /** Set when a statement hit a serialization failure: the transaction is doomed and retryable. */
  conflicted = false;
  /** Set when a statement failed because the connection is lost or the server did not answer. */
  fault?: unknown;
  /** Set when a statement was refused because the server is read-only (no longer the primary). */
  notPrimary?: unknown;
  /** The newest commit log number this snapshot sees (read snapshots only). */
  logHead?: number;
  /**
   * The opening statements, while their answer is outstanding (pipelined: the body's statements
   * go out behind them without waiting). Cleared once they succeeded.
   */
  opening?: Promise<void>;
  /**
   * Whether a cached identity may be trusted before the snapshot's head arrived, to be confirmed
   * when it has (the transaction loop re-runs the body if it cannot be). Off for a re-run.
   */
  speculative = true;
  /**
   * Set when a cached identity was trusted before the head was known: the commit number this
   * instance had delivered up to then (the lowest, if several). The loop must confirm it.
   */
  trustedAt?: number;
  /**
   * A statement the body sent last without waiting for its answer: COMMIT goes out right behind
   * it, and the transaction counts as committed only if it succeeded.
   */
  beforeCommit?: Promise<unknown>;
  private corked?: { uncork(): void };
  /** Whether {@link cork} holds the opening statements back (see {@link open}). */
  private holdingOpening = false;
  /** Why the opening statements failed: no statement of the body may then count. */
  private openFailure?: { error: unknown };
  /** Statements sent and not answered yet. */
  private unanswered = 0;
  /** Set when a statement of the body failed (also when the body caught the error and went on). */
  failed = false;

  constructor(
    protected readonly client: pg.PoolClient,
    protected readonly sql: SqlStatements,
  ) {}

  /** The connection, as the primary locator knows it (which server, admitted when). */
  get connection(): object {
    return this.client;
  }

  /**
   * Sends `begin` without waiting for its answer (the body's statements go out right behind it);
   * `onBegin` reads the answer when it arrives (the opening lasts until a promise it returns
   * settles). Returns the outcome, for the transaction loop.
   */
  open(
    begin: string,
    onBegin?: (tx: this, begun: unknown, before?: unknown, after?: unknown) => void | Promise<void>,
    before?: string,
    after?: pg.QueryConfig,
  ): Promise<void> {
    // Held back until the body has sent what it sends before it first waits for an answer (its
    // first statement, usually): everything goes out in one write to the socket.
    this.cork();
    this.holdingOpening = this.corked !== undefined;
    if (this.holdingOpening) setImmediate(() => this.sendOpening());
    // Sent first, answered first (pipeline mode): it runs on the server before `begin`.
    const preceding = before === undefined ? undefined : this.client.query(before);
    const begun = this.client.query(begin);
    // Sent right behind `begin` (pipeline mode): it runs inside the snapshot.
    const following = after === undefined ? undefined : this.client.query(after);
    const opening = Promise.all([preceding, begun, following]).then(
      ([answered, begunAnswer, followed]) => {
        // A promise (a replica snapshot's freshness): the statements wait for it too.
        const ready = onBegin?.(this, begunAnswer, answered, followed);
        if (ready) return ready.then(() => this.opened());
        this.opened();
      },
      (error) => {
        this.openFailure = { error };
        throw error;
      },
    );
    this.opening = opening;
    // Observed by the loop and by every statement; this only keeps an early failure from counting as unhandled.
    opening.catch(() => {});
    return opening;
  }

  /** Buffers what is sent on the connection until {@link uncork} (queries are sent synchronously). */
  protected cork(): void {
    const stream = (this.client as unknown as { connection?: { stream?: NodeJS.WritableStream } }).connection
      ?.stream as { cork?(): void; uncork?(): void } | undefined;
    if (this.corked || !stream?.cork || !stream.uncork) return;
    stream.cork();
    this.corked = stream as { uncork(): void };
  }

  /** Sends what {@link cork} held back. */
  uncork(): void {
    const stream = this.corked;
    this.corked = undefined;
    this.holdingOpening = false;
    stream?.uncork();
  }

  /**
   * Sends the opening statements and what the body queued behind them. Runs once the body's first
   * steps are done (`setImmediate`: after the promise jobs they queued), unless COMMIT or an error
   * sent them sooner.
   */
  private sendOpening(): void {
    if (this.holdingOpening) this.uncork();
  }

  /**
   * Whether every statement sent was answered with success: then nothing of the transaction can
   * fail any more but its COMMIT, which for a read-only snapshot commits nothing.
   */
  get settled(): boolean {
    return this.unanswered === 0 && !this.failed && this.openFailure === undefined;
  }

  private opened(): void {
    this.opening = undefined;
  }

  protected async run<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    if (this.openFailure) throw this.openFailure.error;
    this.unanswered++;
    try {
      const answer = sendPrepared<R>(this.client, text, values);
      if (this.opening) {
        // BEGIN is answered first; a statement's answer counts only inside the snapshot.
        answer.catch(() => {});
        await this.opening;
      }
      return await answer;
    } catch (error) {
      // Application code may catch this error and go on; the outcome must not depend on it.
      this.failed = true;
      if (isConflict(error)) this.conflicted = true;
      else if (isConnectionFault(error)) this.fault ??= error;
      else if (isServerReadOnly(error)) this.notPrimary ??= error;
      throw error;
    } finally {
      this.unanswered--;
    }
  }

  async get(table: string, id: string): Promise<StoredDocument | null> {
    const { rows } = await this.run<{ doc: string }>(this.sql.table(table).get, [id]);
    return rows.length ? decodeDocument(rows[0].doc) : null;
  }

  /** Refuses a scan or count of an index still being built (`building-indexes.ts`). */
  private async checkBuilt(table: string, index: string): Promise<void> {
    const { building } = this.sql;
    if (building.size === 0 || !building.has(table, index)) return;
    const { rows } = await this.run(isBuildingSql(postgresDialect), [table, index]);
    building.refuseWhileBuilding(table, index, rows.length > 0);
  }

  async scan<Keys extends boolean = true>(req: ScanRequest<Keys>): Promise<ScannedRow<Keys>[]> {
    await this.checkBuilt(req.table, req.index);
    const { rows } = await this.run<{ key?: Buffer; doc: string }>(
      this.sql.scan(req),
      this.sql.scanParams(req),
    );
    if (req.keys === false) return rows.map((r) => ({ doc: decodeDocument(r.doc) })) as ScannedRow<Keys>[];
    return rows.map((r) => ({ key: r.key, doc: decodeDocument(r.doc) })) as ScannedRow<Keys>[];
  }

  async count(table: string, index: string, range: KeyRange): Promise<number> {
    await this.checkBuilt(table, index);
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

  /**
   * Sends the commit log row of this transaction (see commit-log.ts) as its last statement: the
   * transaction loop sends COMMIT right behind it, without waiting (one round trip for both), and
   * commits only if it succeeded. Resolves to the row's number.
   */
  appendLog(origin: string, writes: string | null): Promise<number> {
    // Held until COMMIT is queued too: both go out in one write to the socket (one system call).
    this.cork();
    const appended = this.run<{ seq: string }>(APPEND_SQL, [origin, writes]).then(({ rows }) =>
      Number(rows[0].seq),
    );
    // Observed by the transaction loop; this only keeps a failure from counting as unhandled first.
    appended.catch(() => {});
    this.beforeCommit = appended;
    return appended;
  }
}
