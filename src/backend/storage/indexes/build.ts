/**
 * Online index builds, shared by the SQL engines. An index added to a table that already holds
 * more documents than one batch is not filled inside `migrate` (that would hold the writer, and
 * delay the start, for as long as the table takes): the migration adds its key column and registers
 * the build in `_index_builds`, and a builder fills the column in the background, one bounded batch
 * per transaction, recording its position so a restart resumes where it stopped. Writes compute
 * the new key from the moment the column exists, so the builder only fills documents still
 * without one. Until the build is done, scans and counts on the index are refused with
 * `503 INDEX_NOT_READY` (`building-indexes.ts`). How the SQL index comes to exist differs per engine
 * (a partial index created with the column on SQLite, `CREATE INDEX CONCURRENTLY` at the end on
 * PostgreSQL); this module holds what is common: the table, the batch, the registry and the loop.
 */
import { logger } from "../../logger.ts";
import type { KeyFunction, StorageLayout } from "../engine.ts";
import type { SqlDialect, SqlRequest } from "../sql/dialect.ts";
import { quote } from "../sql/names.ts";
import { decodeDocument } from "../sql/statements.ts";
import type { BuildingIndexes, IndexRef } from "./building.ts";

type Rows = Record<string, unknown>[];

/** Documents per batch transaction unless the engine is told otherwise. */
export const DEFAULT_INDEX_BUILD_BATCH = 1000;

/** How online index builds run; an engine option (`SqliteOptions`, `PostgresOptions`). */
export interface IndexBuildOptions {
  /**
   * Documents filled per batch transaction (default 1000). A table holding no more than this is
   * indexed at once inside `migrate`, as before online builds existed.
   */
  batchSize?: number;
  /** Called after each committed batch; the build waits for it (progress reports, tests pausing a build). */
  afterBatch?: (progress: IndexBuildProgress) => void | Promise<void>;
}

export interface IndexBuildProgress {
  table: string;
  index: string;
  /** Documents this process has read for the build so far. */
  documents: number;
}

const TABLE = '"_index_builds"';

/** Builds not finished yet: the index, and the id of the last document the builder filled (null: none yet). */
export const CREATE_BUILDS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS ${TABLE} (tbl TEXT NOT NULL, idx TEXT NOT NULL, after TEXT, PRIMARY KEY (tbl, idx))`;
export const BUILDS_TABLE = "_index_builds";
export const LIST_BUILDS_SQL = `SELECT tbl, idx FROM ${TABLE}`;

/** Registers a build from the start (again, when an unfinished one's index was redefined). */
export function registerBuild(dialect: SqlDialect, { table, index }: IndexRef): SqlRequest {
  const p = dialect.param;
  return {
    sql: `INSERT INTO ${TABLE} (tbl, idx, after) VALUES (${p(1)}, ${p(2)}, NULL) ON CONFLICT (tbl, idx) DO UPDATE SET after = NULL`,
    params: [table, index],
  };
}

/** Unregisters a build: it is finished, or its index was dropped. */
export function unregisterBuild(dialect: SqlDialect, { table, index }: IndexRef): SqlRequest {
  return {
    sql: `DELETE FROM ${TABLE} WHERE tbl = ${dialect.param(1)} AND idx = ${dialect.param(2)}`,
    params: [table, index],
  };
}

/** One row while the build of the index in params 1, 2 is unfinished. */
export const isBuildingSql = (dialect: SqlDialect): string =>
  `SELECT 1 AS building FROM ${TABLE} WHERE tbl = ${dialect.param(1)} AND idx = ${dialect.param(2)}`;

/** The registered builds of indexes `layout` has (a build of a table or index it lacks waits for a schema that has it). */
export function buildsOf(rows: Rows, layout: StorageLayout): IndexRef[] {
  return rows
    .map((r) => ({ table: String(r.tbl), index: String(r.idx) }))
    .filter((b) => layout.tables[b.table]?.indexes.some((i) => i.name === b.index));
}

/**
 * One batch of a build, in the caller's transaction: reads the build's position, computes the key
 * of the next `batchSize` documents by id and stores it where the column is still empty (a write
 * since the build began already stored the right one), then moves the position. Returns the
 * number of documents read (fewer than `batchSize`: the column is filled), or null when the build
 * is no longer registered.
 */
export function* buildBatch(
  dialect: SqlDialect,
  build: IndexRef,
  keysOf: KeyFunction,
  batchSize: number,
): Generator<SqlRequest, number | null, Rows> {
  const { param } = dialect;
  const position: Rows = yield {
    sql: `SELECT after FROM ${TABLE} WHERE tbl = ${param(1)} AND idx = ${param(2)}`,
    params: [build.table, build.index],
  };
  if (!position.length) return null;
  const after = position[0].after === null ? null : String(position[0].after);
  const t = quote(dialect.names.table(build.table));
  const rows: Rows =
    after === null
      ? yield { sql: `SELECT id, doc FROM ${t} ORDER BY id LIMIT ${batchSize}` }
      : yield {
          sql: `SELECT id, doc FROM ${t} WHERE id > ${param(1)} ORDER BY id LIMIT ${batchSize}`,
          params: [after],
        };
  if (!rows.length) return 0;
  const batch = rows.map((r) => ({
    id: String(r.id),
    keys: [keysOf(build.table, decodeDocument(String(r.doc)))[build.index]],
  }));
  for (const request of dialect.backfill(build.table, [build.index], batch)) yield request;
  yield {
    sql: `UPDATE ${TABLE} SET after = ${param(1)} WHERE tbl = ${param(2)} AND idx = ${param(3)}`,
    params: [String(rows[rows.length - 1].id), build.table, build.index],
  };
  return rows.length;
}

/** What an engine does for its builds; `IndexBuilder` drives them. */
export interface BuildSteps {
  /** The registered builds of the migrated layout, read from the database. */
  list(): Promise<IndexRef[]>;
  /** Whether this process may build now (PostgreSQL: one instance at a time); false: another does. */
  acquire(): Promise<boolean>;
  release(): Promise<void>;
  /** One batch in its own transaction (see {@link buildBatch}). */
  batch(build: IndexRef, batchSize: number): Promise<number | null>;
  /** After the column is filled: makes the SQL index complete, then unregisters the build. */
  finish(build: IndexRef): Promise<void>;
  /** Cuts short what is running (a long `CREATE INDEX CONCURRENTLY`) when the engine closes. */
  abort?(): Promise<void>;
}

/** Wait after a failed batch, and between looks at a build another instance runs. */
const RETRY_MS = 1000;
/** How often a long build logs how far it got. */
const PROGRESS_LOG_MS = 10_000;

/**
 * Runs an engine's builds in the background, one batch at a time with a yield to the event loop
 * in between (queued writes go first), until none is left or `stop` is called. A failing batch
 * is logged and tried again a second later: the position lives in the database, so nothing is
 * lost or done twice.
 */
export class IndexBuilder {
  readonly done: Promise<void>;
  private stopped = false;
  private wake: () => void = () => {};

  constructor(
    private readonly building: BuildingIndexes,
    private readonly steps: BuildSteps,
    private readonly options: IndexBuildOptions,
  ) {
    this.done = this.run();
  }

  /** Stops after the running batch, or at once where the engine can cut it short. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.steps.abort?.();
    await this.done;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    const batchSize = this.options.batchSize ?? DEFAULT_INDEX_BUILD_BATCH;
    while (!this.stopped) {
      try {
        const builds = await this.steps.list();
        this.building.replace(builds);
        if (!builds.length) return;
        if (!(await this.steps.acquire())) {
          await this.pause(RETRY_MS);
          continue;
        }
        try {
          for (const build of builds) {
            if (this.stopped) return;
            await this.build(build, batchSize);
          }
        } finally {
          await this.steps.release();
        }
      } catch (error) {
        if (this.stopped) return;
        logger.warn("index build interrupted; retrying", { error: String(error) });
        await this.pause(RETRY_MS);
      }
    }
  }

  private async build(build: IndexRef, batchSize: number): Promise<void> {
    const started = Date.now();
    logger.info("building index", { ...build });
    let documents = 0;
    let reported = started;
    for (;;) {
      if (this.stopped) return;
      const read = await this.steps.batch(build, batchSize);
      if (read === null) return;
      documents += read;
      if (Date.now() - reported >= PROGRESS_LOG_MS) {
        reported = Date.now();
        logger.info("building index", { ...build, documents });
      }
      await this.options.afterBatch?.({ ...build, documents });
      if (read < batchSize) break;
      // Writes queued during the batch take their turn before the next one.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (this.stopped) return;
    await this.steps.finish(build);
    this.building.ready(build.table, build.index);
    logger.info("index built", { ...build, documents, ms: Date.now() - started });
  }
}
