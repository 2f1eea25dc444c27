/**
 * Embedded storage on better-sqlite3 (WAL). One writer connection takes mutations one at a time;
 * reads use a small pool of reader connections, each read in its own snapshot (BEGIN … COMMIT),
 * so a query never sees a half-applied mutation and never blocks the writer.
 *
 * The statements and the layout migration are shared with PostgreSQL (`sql/statements.ts`,
 * `sql/migration.ts`, `sqliteDialect` in `sql/dialect.ts`). This file ties the parts together:
 * connections and their statement caches (sqlite/connection.ts), the transactions' statements
 * (sqlite/transaction.ts), the read pool (sqlite/read-pool.ts), the single writer
 * (sqlite/write-lock.ts), and the other processes on the file (sqlite/cross-process.ts).
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseOpenError } from "../db-errors.ts";
import type {
  KeyFunction,
  ReadTransaction,
  ScanRequest,
  StorageEngine,
  StorageLayout,
  WriteTransaction,
} from "../engine.ts";
import { DEFAULT_INDEX_BUILD_BATCH, IndexBuilder, type IndexBuildOptions } from "../indexes/build.ts";
import { BuildingIndexes, type IndexRef } from "../indexes/building.ts";
import { sqliteDialect } from "../sql/dialect.ts";
import { migrationProgram, pendingMigration, type Rows, runSync } from "../sql/migration.ts";
import { SqlStatements } from "../sql/statements.ts";
import { SqliteConnection, type Stmt, whyUnopenable } from "./connection.ts";
import { SqliteCrossProcess } from "./cross-process.ts";
import { SqliteBuildSteps } from "./index-build.ts";
import { DEFAULT_BUSY_TIMEOUT_MS, type SqliteOptions } from "./options.ts";
import { SqliteReadPool } from "./read-pool.ts";
import { SqliteWriter } from "./transaction.ts";
import { SqliteWriteLock } from "./write-lock.ts";

export { DEFAULT_BUSY_TIMEOUT_MS, type SqliteOptions } from "./options.ts";

export class SqliteEngine implements StorageEngine {
  readonly kind = "sqlite" as const;
  private readonly writer: SqliteConnection;
  private readonly readers: SqliteReadPool;
  private readonly writeLock: SqliteWriteLock;
  private readonly otherProcesses: SqliteCrossProcess;
  /** Cluster mode: other workers' commits arrive as wake-ups through the primary (for /healthz). */
  readonly commitChannel?: () => "listening";
  /** Cluster mode: commits in the shared log this worker has not applied yet. */
  readonly commitLag?: () => Promise<number>;

  private readonly busyTimeoutMs: number;
  private readonly indexBuild: IndexBuildOptions;
  private readonly building = new BuildingIndexes();
  private builder?: IndexBuilder;

  /** Opens the file; one that cannot be opened throws a {@link DatabaseOpenError} naming the reason. */
  constructor(options: SqliteOptions) {
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    this.indexBuild = options.indexBuild ?? {};
    const synchronous = options.synchronous ?? "NORMAL";
    try {
      if (options.filename !== ":memory:") mkdirSync(dirname(options.filename), { recursive: true });
      this.writer = new SqliteConnection(options.filename, synchronous, false);
    } catch (error) {
      throw new DatabaseOpenError(options.filename, whyUnopenable(options.filename, error));
    }
    this.readers = new SqliteReadPool(options.filename, synchronous, this.writer, !options.commitLog);
    // A snapshot kept open would stop SQLite from restarting the log at this write (read-pool.ts).
    this.writeLock = new SqliteWriteLock(this.writer, options.filename, () =>
      this.readers.endIdleSnapshots(),
    );
    this.otherProcesses = new SqliteCrossProcess(options, this.writer, this.writeLock);
    if (options.commitLog) {
      this.commitChannel = () => "listening";
      this.commitLag = () => this.otherProcesses.commitLag() ?? Promise.resolve(0);
    }
  }

  /**
   * Reads the recorded layout without any lock and compares; only when it differs takes the write
   * lock (waiting for another process as long as it takes, and saying which file is locked) and
   * migrates, re-reading the layout under the lock (another process may have migrated meanwhile).
   * New indexes of tables holding more than a batch are then built online (`index-build.ts`).
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
    const pending = db.transaction(() => runSync(pendingMigration(sqliteDialect, layout), run(new Map())))();
    let building = pending?.building ?? [];
    if (pending === null || pending.steps.length > 0) {
      const release = await this.writeLock.turn();
      try {
        await this.writeLock.begin(Number.POSITIVE_INFINITY);
        try {
          const batchSize = this.indexBuild.batchSize ?? DEFAULT_INDEX_BUILD_BATCH;
          building = runSync(migrationProgram(sqliteDialect, layout, keysOf, batchSize), run(new Map()));
        } catch (error) {
          db.prepare("ROLLBACK").run();
          throw error;
        }
        db.prepare("COMMIT").run();
      } finally {
        release();
      }
    }
    this.writer.sql = new SqlStatements(sqliteDialect, layout, this.building);
    this.building.replace(building);
    await this.otherProcesses.start();
    await this.builder?.stop();
    if (building.length) {
      const steps = new SqliteBuildSteps(this.writer, this.writeLock, layout, keysOf, this.busyTimeoutMs);
      this.builder = new IndexBuilder(this.building, steps, this.indexBuild);
    }
  }

  buildingIndexes(): IndexRef[] {
    return this.building.list();
  }

  async indexesBuilt(): Promise<void> {
    await this.builder?.done;
  }

  read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    return this.readers.read(fn);
  }

  async write<T>(fn: (tx: WriteTransaction) => Promise<T>, writeSet?: () => string | undefined): Promise<T> {
    // The deadline counts from the call: mutations queued behind a foreign lock do not each wait anew.
    const deadline = Date.now() + this.busyTimeoutMs;
    const release = await this.writeLock.turn();
    const conn = this.writer;
    let seq: number | undefined;
    let result: T;
    try {
      await this.writeLock.begin(deadline);
      try {
        result = await fn(new SqliteWriter(conn));
        // From here to COMMIT nothing awaits: no other call sees the logged row uncommitted.
        seq = this.otherProcesses.append(writeSet);
      } catch (error) {
        conn.stmts.get("ROLLBACK").run();
        throw error;
      }
      conn.commit.run();
    } catch (error) {
      if (seq !== undefined) this.otherProcesses.abandoned(seq);
      throw error;
    } finally {
      release();
    }
    if (seq !== undefined) this.otherProcesses.published(seq);
    return result;
  }

  onExternalCommit(listener: (payload?: string) => void): () => void {
    return this.otherProcesses.onExternalCommit(listener);
  }

  /** See {@link SqliteCrossProcess.syncExternalCommits}. */
  syncExternalCommits(snapshot?: ReadTransaction): Promise<void> | undefined {
    return this.otherProcesses.syncExternalCommits(snapshot);
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
    await this.builder?.stop();
    this.otherProcesses.close();
    this.readers.close();
    this.writer.db.close();
  }
}
