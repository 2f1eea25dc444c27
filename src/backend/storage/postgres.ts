/**
 * Production / scale-out storage on PostgreSQL, with the same physical layout as SQLite: one
 * table `t_<name>` per schema table holding each document as JSON text plus one BYTEA key column
 * per index (bytea compares with memcmp, exactly like the encoded keys), a btree index per key
 * column, and a `_layout` table recording which index fields each key column was built from.
 *
 * Reads run in one REPEATABLE READ READ ONLY transaction (a consistent snapshot); writes run in
 * SERIALIZABLE transactions, retried on serialization failures and deadlocks. Several server
 * instances may share one database: every write transaction appends its write set to the commit
 * log (commit-log.ts) before it commits, other instances follow the log (commit-follower.ts), and
 * NOTIFY wakes them up sooner (postgres-notify.ts).
 *
 * Documents are stored as TEXT rather than JSONB: JSONB rejects the NUL character in strings and
 * reorders object keys, while documents must round-trip exactly as on SQLite; nothing queries
 * inside documents in SQL (every indexed value lives in a key column).
 *
 * The statements and the layout migration are shared with SQLite (`sql-statements.ts`,
 * `sql-migration.ts`, `postgresDialect` in `sql-dialect.ts`); this file owns connections and
 * transactions.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { ServiceError } from "../errors.ts";
import { logger } from "../logger.ts";
import { CommitFollower } from "./commit-follower.ts";
import {
  APPEND_SQL,
  ENGINE_WRITE_BEGIN,
  logSchemaSql,
  MAX_LOGGED_BYTES,
  MIGRATION_BEGIN,
  READ_BEGIN,
  snapshotHead,
  triggerSql,
  UNTRIGGERED_SQL,
} from "./commit-log.ts";
import { classifyDatabaseError, databaseUnavailable, isConflict, isConnectionFault } from "./db-errors.ts";
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
import { type ChannelState, CommitChannel, UNCARRIED } from "./postgres-notify.ts";
import { type PoolerMode, UnnamedStatementClient } from "./postgres-pooler.ts";
import { postgresDialect } from "./sql-dialect.ts";
import { migrationProgram, runAsync } from "./sql-migration.ts";
import { decodeDocument, SqlStatements } from "./sql-statements.ts";

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` */
  connectionString: string;
  /** Largest number of pooled connections (default 10). */
  maxConnections?: number;
  /** Attempts of a write transaction before giving up on serialization conflicts (default 30). */
  maxWriteAttempts?: number;
  /** NOTIFY channel shared by the instances of one deployment (default `service_auth_commits`). */
  channel?: string;
  /** Connecting, or waiting for a pooled connection, fails after this long (default 5000 ms). */
  connectTimeoutMs?: number;
  /** The server cancels a statement running longer than this (`statement_timeout`, default 10000 ms). */
  statementTimeoutMs?: number;
  /**
   * The client gives up on a statement that got no answer for this long: a frozen or unreachable
   * server, which cannot cancel anything itself (default: statement timeout + 2000 ms).
   */
  queryTimeoutMs?: number;
  /** `ping` (for `/healthz`) fails after this long (default 1500 ms, so `/healthz` answers within 2 s). */
  pingTimeoutMs?: number;
  /**
   * Whether instances wake each other with LISTEN/NOTIFY (default true). Off, they find each
   * other's commits only by polling the commit log (`DATABASE_NOTIFY=off`).
   */
  notify?: boolean;
  /** The LISTEN connection's URL when `connectionString` goes through a pooler (`DATABASE_LISTEN_URL`). */
  listenConnectionString?: string;
  /** `transaction`: a transaction-mode pooler sits in between; no named prepared statements (`DATABASE_POOLER`). */
  pooler?: PoolerMode;
  /** Period of the commit log poll, ms (default 500 with notifications, 100 without; `DATABASE_POLL_MS`). */
  pollIntervalMs?: number;
  /** Commit log rows kept when pruning (default 10,000). */
  commitLogKeep?: number;
  /** Heartbeat period of the LISTEN connection, ms (default 500); unanswered for twice that, it is replaced. */
  heartbeatMs?: number;
  /**
   * Default true. False trusts cached identities without confirming that this instance heard every
   * commit made before the request: a session revoked on another instance stays usable here until
   * the notification arrives. Only for measuring what the check costs (`npm run bench -- postgres`).
   */
  crossInstanceCheck?: boolean;
}

/** Defaults of the timeouts; `openEngine` reads the `DATABASE_*_MS` variables over them. */
export const POSTGRES_TIMEOUT_DEFAULTS = {
  connectTimeoutMs: 5000,
  statementTimeoutMs: 10_000,
  pingTimeoutMs: 1500,
} as const;

/** How other instances' commits reach this one, as `/healthz` reports it. */
export type CommitChannelHealth = ChannelState | "polling";

/** A read snapshot before the commit log exists. */
const PLAIN_READ_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
/** Serializes concurrent migrations of several instances starting at once. */
const MIGRATION_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('service-auth:migrate'))";

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

class PgReader implements ReadTransaction {
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

class PgWriter extends PgReader implements WriteTransaction {
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Rejects with `error()` when `promise` has not settled within `ms`. */
function withDeadline<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Where a transaction attempt failed, which decides whether it may run again. */
type Phase = "begin" | "body" | "commit";

export class PostgresEngine implements StorageEngine {
  readonly kind = "postgres" as const;
  private readonly pool: pg.Pool;
  /**
   * Connections for transactions opened while another one of this engine is open in the same
   * async context (e.g. an HTTP action's lazy authentication read inside its mutation). From the
   * main pool they could deadlock it: every connection held by a caller waiting for one more.
   */
  private readonly nestedPool: pg.Pool;
  private readonly inTransaction = new AsyncLocalStorage<true>();
  /**
   * The commit log follower's own connections. Requests wait for it while holding a transaction's
   * connection, so sharing the main pool would deadlock a busy server (every connection held by
   * a request waiting for the follower, which waits for a connection).
   */
  private readonly followerPool: pg.Pool;
  /** NOTIFY wake-ups; absent in polling mode. */
  private readonly channel?: CommitChannel;
  private readonly follower: CommitFollower;
  private readonly channelName: string;
  private logInstalled = false;
  private readonly crossInstanceCheck: boolean;
  /** Distinguishes this instance's commit log rows and notifications from other instances'. */
  readonly instanceId: string;
  /** Statement texts of the migrated layout. */
  private sql = new SqlStatements(postgresDialect, { tables: {} });
  private readonly maxWriteAttempts: number;
  private readonly pingTimeoutMs: number;
  /** Why each pooled connection died, when it did (its `error` event); read when a transaction fails. */
  private readonly lost = new WeakMap<pg.ClientBase, Error>();

  constructor(options: PostgresOptions) {
    const statementTimeoutMs = options.statementTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.statementTimeoutMs;
    const connection: pg.ClientConfig = {
      connectionString: options.connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.connectTimeoutMs,
      statement_timeout: statementTimeoutMs,
      query_timeout: options.queryTimeoutMs ?? statementTimeoutMs + 2000,
      // Half-open connections (a server host gone without a FIN) are found by the kernel.
      keepAlive: true,
    };
    const poolConfig: pg.PoolConfig = {
      ...connection,
      max: options.maxConnections ?? 10,
      application_name: "service-auth",
      ...(options.pooler === "transaction" ? { Client: UnnamedStatementClient } : {}),
    };
    this.pool = new pg.Pool(poolConfig);
    this.nestedPool = new pg.Pool(poolConfig);
    this.followerPool = new pg.Pool({ ...poolConfig, max: 2, application_name: "service-auth-follower" });
    for (const pool of [this.pool, this.nestedPool, this.followerPool]) {
      // An idle pooled connection that dies (server restart) is dropped; the next checkout reconnects.
      pool.on("error", (error) =>
        logger.warn("PostgreSQL pooled connection failed", { error: String(error) }),
      );
      // pg-pool listens for errors of idle connections only: a connection that dies while checked
      // out (backend killed, failover) would emit an unhandled 'error' and end the process.
      pool.on("connect", (client) => {
        client.on("error", (error) => {
          if (this.lost.has(client)) return;
          this.lost.set(client, error);
          logger.warn("PostgreSQL connection lost", { error: String(error) });
        });
      });
    }
    this.maxWriteAttempts = options.maxWriteAttempts ?? 30;
    this.pingTimeoutMs = options.pingTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.pingTimeoutMs;
    this.channelName = options.channel ?? "service_auth_commits";
    this.crossInstanceCheck = options.crossInstanceCheck ?? true;
    const notify = options.notify ?? true;
    this.follower = new CommitFollower({
      query: async (sql, params) => {
        try {
          return (await this.followerPool.query(sql, params)).rows;
        } catch (error) {
          // A catch-up read during an outage is a typed 503 for whoever waits on it.
          throw classifyDatabaseError(error);
        }
      },
      pollIntervalMs: options.pollIntervalMs ?? (notify ? 500 : 100),
      keep: options.commitLogKeep,
    });
    if (notify) {
      const heartbeatMs = options.heartbeatMs ?? 500;
      this.channel = new CommitChannel({
        connection: { connectionString: options.listenConnectionString ?? options.connectionString },
        pool: this.pool,
        channel: this.channelName,
        heartbeatMs,
        heartbeatTimeoutMs: 2 * heartbeatMs,
        onHint: (seq, payload) => this.follower.hint(seq, payload),
        onListening: () => void this.follower.sync(),
      });
    }
    this.instanceId = this.channel?.instanceId ?? randomUUID();
  }

  /** Backend pid of the LISTEN connection (tests terminate it to prove reconnection). */
  async listenerPid(): Promise<number | undefined> {
    return this.channel?.listenerPid();
  }

  /** How other instances' commits reach this one: over a live LISTEN connection, or by polling only. */
  commitChannel(): CommitChannelHealth {
    return this.channel?.state ?? "polling";
  }

  async migrate(layout: StorageLayout, keysOf: KeyFunction): Promise<void> {
    const client = await this.pool.connect().catch((error) => {
      throw classifyDatabaseError(error);
    });
    let broken: Error | undefined;
    try {
      // READ COMMITTED: once the lock is ours, each statement sees what an earlier migrator committed.
      await client.query(MIGRATION_BEGIN);
      await client.query(MIGRATION_LOCK_SQL);
      await runAsync(
        migrationProgram(postgresDialect, layout, keysOf),
        async ({ sql, params }) => (await client.query(sql, params)).rows,
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch((e) => (broken = e));
      throw classifyDatabaseError(this.lost.get(client) ?? error);
    } finally {
      client.release(broken ?? this.lost.get(client));
    }
    this.sql = new SqlStatements(postgresDialect, layout);
    await this.installCommitLog(layout);
    this.logInstalled = true;
    await this.follower.start();
    await this.channel?.start();
  }

  /**
   * The commit log and its external-change triggers: DDL in a transaction of its own, never mixed
   * with data writes, serialized with other starting instances by the migration lock.
   */
  private async installCommitLog(layout: StorageLayout): Promise<void> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      await client.query(MIGRATION_LOCK_SQL);
      for (const sql of logSchemaSql()) await client.query(sql);
      const tables = Object.keys(layout.tables).map((t) => postgresDialect.names.table(t));
      const { rows } = await client.query<{ name: string }>(UNTRIGGERED_SQL, [tables]);
      for (const { name } of rows)
        for (const sql of triggerSql(name, this.channelName)) await client.query(sql);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch((e) => (broken = e));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** A connection for a transaction (see {@link nestedPool}); an unreachable server is DATABASE_UNAVAILABLE. */
  private async connect(): Promise<pg.PoolClient> {
    try {
      return await (this.inTransaction.getStore() ? this.nestedPool : this.pool).connect();
    } catch (error) {
      logger.warn("PostgreSQL connection failed", { error: String(error) });
      throw classifyDatabaseError(error);
    }
  }

  async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    const withHead = this.logInstalled && this.crossInstanceCheck;
    return this.transaction(withHead ? READ_BEGIN : PLAIN_READ_BEGIN, PgReader, fn, (tx, begun) => {
      tx.logHead = snapshotHead(begun);
    });
  }

  /**
   * Runs `fn` in a write transaction that also appends `writeSet()` to the commit log before it
   * commits, then tells other instances (NOTIFY, best effort). The number drawn is this
   * instance's own, so the follower never delivers it back here.
   */
  async write<T>(fn: (tx: WriteTransaction) => Promise<T>, writeSet?: () => string | undefined): Promise<T> {
    // Numbers drawn by every attempt; the last attempt's number and payload are the commit's.
    const drawn: number[] = [];
    let seq: number | undefined;
    let payload: string | undefined;
    let result: T;
    try {
      result = await this.transaction(ENGINE_WRITE_BEGIN, PgWriter, async (tx) => {
        seq = undefined;
        const value = await fn(tx);
        payload = writeSet?.();
        if (payload) {
          if (Buffer.byteLength(payload) > MAX_LOGGED_BYTES) payload = undefined;
          seq = await tx.appendLog(this.instanceId, payload ?? null);
          drawn.push(seq);
          this.follower.drew(seq);
        }
        return value;
      });
    } catch (error) {
      this.follower.abandoned(drawn);
      throw error;
    }
    if (seq !== undefined) this.channel?.publish(seq, payload ?? UNCARRIED);
    return result;
  }

  /**
   * Runs `fn` in a transaction opened with `begin`, on a connection of its own. Runs it again
   * after a serialization failure or deadlock (with a growing, jittered backoff), and once on a
   * fresh connection when the pooled one turned out dead at BEGIN (nothing was sent yet). A lost
   * connection or an unanswered statement ends as `DATABASE_UNAVAILABLE`, whatever `fn` made of
   * the error; the connection is then discarded, never returned to the pool.
   */
  private async transaction<T, Tx extends PgReader>(
    begin: string,
    Transaction: new (client: pg.PoolClient, sql: SqlStatements) => Tx,
    fn: (tx: Tx) => Promise<T>,
    onBegin?: (tx: Tx, begun: unknown) => void,
  ): Promise<T> {
    let reconnected = false;
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      const tx = new Transaction(client, this.sql);
      let phase: Phase = "begin";
      // A connection whose BEGIN, COMMIT or ROLLBACK failed is not returned to the pool.
      let broken: unknown;
      try {
        const begun = await client.query(begin);
        onBegin?.(tx, begun);
        phase = "body";
        const result = await this.inTransaction.run(true, () => fn(tx));
        phase = "commit";
        await client.query("COMMIT");
        return result;
      } catch (error) {
        const fault = this.lost.get(client) ?? tx.fault ?? (isConnectionFault(error) ? error : undefined);
        if (fault === undefined) {
          await client.query("ROLLBACK").catch((e) => (broken = e));
        } else {
          broken = fault;
        }
        if (broken === undefined && (tx.conflicted || isConflict(error))) {
          if (attempt >= this.maxWriteAttempts) {
            throw new ServiceError(
              "CONFLICT",
              "The transaction kept conflicting with concurrent writes; try again",
            );
          }
          // Jittered, growing backoff so the conflicting transactions stop meeting each other.
          await sleep(Math.random() * Math.min(100, 2 * 2 ** Math.min(attempt, 6)));
          continue;
        }
        if (fault === undefined) throw broken === undefined ? error : classifyDatabaseError(broken);
        if (phase === "begin" && !reconnected) {
          // A pooled connection that died while idle (server restart): nothing ran, try a new one.
          reconnected = true;
          continue;
        }
        logger.warn("PostgreSQL transaction failed: database unavailable", {
          phase,
          error: String(fault),
        });
        // At COMMIT the outcome is unknown: the client is told to try again, like for any outage.
        throw databaseUnavailable();
      } finally {
        client.release(
          broken === undefined ? undefined : broken instanceof Error ? broken : new Error(String(broken)),
        );
      }
    }
  }

  onExternalCommit(listener: (payload?: string) => void): () => void {
    return this.follower.onCommit(listener);
  }

  /**
   * Nothing to wait for when `snapshot` is a read whose newest commit this instance has already
   * delivered (the common case, free: `READ_BEGIN` fetched the number with BEGIN); otherwise one
   * catch-up round shared with every caller that arrived meanwhile.
   */
  syncExternalCommits(snapshot?: ReadTransaction): Promise<void> | undefined {
    if (!this.crossInstanceCheck) return undefined;
    const head = snapshot instanceof PgReader ? snapshot.logHead : undefined;
    if (head !== undefined && head <= this.follower.position) return undefined;
    return this.follower.sync();
  }

  /**
   * `SELECT 1` within `pingTimeoutMs`: a frozen server (or a pool full of hung connections) fails
   * the ping in time rather than hanging `/healthz`; the abandoned attempt ends on its own timeouts.
   */
  async ping(): Promise<void> {
    try {
      await withDeadline(
        this.pool.query("SELECT 1"),
        this.pingTimeoutMs,
        () => new Error(`no answer within ${this.pingTimeoutMs} ms`),
      );
    } catch (error) {
      throw classifyDatabaseError(error);
    }
  }

  /**
   * The plan of a scan. Sequential scans are disabled for this EXPLAIN only: on a small table the
   * planner rightly prefers one, and the question asked is whether the index serves the scan.
   */
  async explainScan(req: ScanRequest): Promise<string> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL enable_seqscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN ${this.sql.scan(req)}`,
        this.sql.scanParams(req),
      );
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.channel?.close();
    this.follower.close();
    await Promise.all([this.pool.end(), this.nestedPool.end(), this.followerPool.end()]);
  }
}
