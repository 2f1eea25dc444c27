/**
 * The SQLite side of online index builds (`index-build.ts`): each batch is one write transaction
 * on the writer connection, taking its turn behind the mutations queued meanwhile, so a write
 * waits at most one batch. The partial SQL index was created with the key column and every batch
 * maintains it, so finishing only unregisters the build. Several processes on one file may all
 * run a build: the position is read inside each batch's transaction, so they take turns.
 */

import type { KeyFunction, StorageLayout } from "../engine.ts";
import { type BuildSteps, buildBatch, buildsOf, LIST_BUILDS_SQL, unregisterBuild } from "../indexes/build.ts";
import type { IndexRef } from "../indexes/building.ts";
import type { SqlRequest } from "../sql/dialect.ts";
import { sqliteDialect } from "../sql/dialect.ts";
import { type Rows, runSync } from "../sql/migration.ts";
import type { SqliteConnection } from "./connection.ts";
import type { SqliteWriteLock } from "./write-lock.ts";

export class SqliteBuildSteps implements BuildSteps {
  constructor(
    private readonly writer: SqliteConnection,
    private readonly writeLock: SqliteWriteLock,
    private readonly layout: StorageLayout,
    private readonly keysOf: KeyFunction,
    private readonly busyTimeoutMs: number,
  ) {}

  private readonly run = (request: SqlRequest): Rows => {
    const stmt = this.writer.stmts.get(request.sql);
    if (stmt.reader) return stmt.all(request.params ?? []) as Rows;
    stmt.run(request.params ?? []);
    return [];
  };

  /** Runs `fn` in a write transaction of its own, in turn with the mutations. */
  private async transaction<T>(fn: () => T): Promise<T> {
    const release = await this.writeLock.turn();
    try {
      await this.writeLock.begin(Date.now() + this.busyTimeoutMs);
      let result: T;
      try {
        result = fn();
      } catch (error) {
        this.writer.stmts.get("ROLLBACK").run();
        throw error;
      }
      this.writer.commit.run();
      return result;
    } finally {
      release();
    }
  }

  async list(): Promise<IndexRef[]> {
    // In turn: the writer connection may be inside a mutation's transaction between two awaits.
    const release = await this.writeLock.turn();
    try {
      return buildsOf(this.run({ sql: LIST_BUILDS_SQL }), this.layout);
    } finally {
      release();
    }
  }

  async acquire(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}

  batch(build: IndexRef, batchSize: number): Promise<number | null> {
    return this.transaction(() =>
      runSync(buildBatch(sqliteDialect, build, this.keysOf, batchSize), this.run),
    );
  }

  async finish(build: IndexRef): Promise<void> {
    await this.transaction(() => this.run(unregisterBuild(sqliteDialect, build)));
  }
}
