/**
 * The layout migration of every SQL engine, written once as a program of SQL requests: it reads
 * the physical state, plans with `planMigration` and renders each step through the dialect. The
 * program is a generator, so the synchronous SQLite driver and the asynchronous PostgreSQL driver
 * run the same code inside their own transaction, each answering a request with its rows.
 */

import type { KeyFunction, StorageLayout } from "../engine.ts";
import {
  BUILDS_TABLE,
  buildsOf,
  CREATE_BUILDS_TABLE_SQL,
  LIST_BUILDS_SQL,
  registerBuild,
  unregisterBuild,
} from "../indexes/build.ts";
import type { IndexRef } from "../indexes/building.ts";
import { CREATION_INDEX, type MigrationStep, type PhysicalState, planMigration } from "../layout-diff.ts";
import type { SqlDialect, SqlRequest } from "./dialect.ts";
import { quote } from "./names.ts";
import { decodeDocument } from "./statements.ts";

export type Rows = Record<string, unknown>[];
/** Yields the statements to run; each `yield` receives the statement's rows (`[]` for none). */
export type SqlProgram = Generator<SqlRequest, void, Rows>;

/** Documents read per batch of a backfill run inside the migration. */
const BACKFILL_BATCH = 500;

/** A program of reads only, returning what it found. */
export type SqlQuery<R> = Generator<SqlRequest, R, Rows>;

const LAYOUT_TABLE = "_layout";

/** Reads the physical state; null when there is no `_layout` table yet (a new database). */
function* physicalState(dialect: SqlDialect): SqlQuery<PhysicalState | null> {
  const columns = new Map<string, Set<string>>();
  for (const r of yield { sql: dialect.columnsSql }) {
    const table = String(r.tbl);
    let set = columns.get(table);
    if (!set) columns.set(table, (set = new Set()));
    set.add(String(r.col));
  }
  if (!columns.has(LAYOUT_TABLE)) return null;
  const recorded = new Map<string, Record<string, string[]>>();
  for (const r of yield { sql: `SELECT tbl, indexes FROM "${LAYOUT_TABLE}"` }) {
    recorded.set(String(r.tbl), JSON.parse(String(r.indexes)));
  }
  const indexes = new Map<string, string>();
  for (const r of yield { sql: dialect.indexesSql }) indexes.set(String(r.name), String(r.tbl));
  const building = new Map<string, Set<string>>();
  if (columns.has(BUILDS_TABLE)) {
    for (const r of yield { sql: LIST_BUILDS_SQL }) {
      const table = String(r.tbl);
      let set = building.get(table);
      if (!set) building.set(table, (set = new Set()));
      set.add(String(r.idx));
    }
  }
  return { recorded, columns, indexes, building };
}

/** The plan, and the unfinished online builds of `layout`'s indexes. */
export interface PendingMigration {
  steps: MigrationStep[];
  building: IndexRef[];
}

const flatten = (building: Map<string, Set<string>>, layout: StorageLayout): IndexRef[] =>
  buildsOf(
    [...building].flatMap(([tbl, set]) => [...set].map((idx) => ({ tbl, idx }))),
    layout,
  );

/**
 * The steps migrating the database to `layout`, read without writing anything (so without the
 * write lock), with the unfinished builds; null for a new database. No steps means the layout is
 * already in place.
 */
export function* pendingMigration(
  dialect: SqlDialect,
  layout: StorageLayout,
): SqlQuery<PendingMigration | null> {
  const state = yield* physicalState(dialect);
  if (!state) return null;
  return { steps: planMigration(layout, state, dialect.names), building: flatten(state.building, layout) };
}

/**
 * Creates or updates tables, key columns, indexes and the `_layout` record to match `layout`.
 * New key columns of a table holding more than `batchSize` documents are not filled here: their
 * builds are registered, to be run online (`index-build.ts`). Returns the unfinished builds.
 */
export function* migrationProgram(
  dialect: SqlDialect,
  layout: StorageLayout,
  keysOf: KeyFunction,
  batchSize: number,
): SqlQuery<IndexRef[]> {
  yield {
    sql: `CREATE TABLE IF NOT EXISTS "${LAYOUT_TABLE}" (tbl TEXT PRIMARY KEY, indexes TEXT NOT NULL)`,
  };
  yield { sql: CREATE_BUILDS_TABLE_SQL };
  const state = yield* physicalState(dialect);
  if (!state) throw new Error(`the "${LAYOUT_TABLE}" table was not created`);
  const building = new Map([...state.building].map(([table, set]) => [table, new Set(set)]));
  /** Builds registered by this run: their SQL index is the build's to create. */
  const online = new Set<string>();
  for (const step of planMigration(layout, state, dialect.names)) {
    if (step.kind === "backfill") {
      const t = quote(dialect.names.table(step.table));
      const [{ n }] = yield {
        sql: `SELECT count(*) AS n FROM (SELECT 1 FROM ${t} LIMIT ${batchSize + 1}) s`,
      };
      if (Number(n) <= batchSize) {
        yield* backfill(dialect, step.table, step.indexes, keysOf);
        continue;
      }
      for (const index of step.indexes) {
        yield registerBuild(dialect, { table: step.table, index });
        online.add(`${step.table}\0${index}`);
        let set = building.get(step.table);
        if (!set) building.set(step.table, (set = new Set()));
        set.add(index);
      }
    } else if (step.kind === "cancelBuild") {
      yield unregisterBuild(dialect, step);
      building.get(step.table)?.delete(step.index);
    } else if (step.kind === "createIndex" && online.has(`${step.table}\0${step.index}`)) {
      const request = dialect.indexAtBuildStart(step.table, step.index);
      if (request) yield request;
    } else {
      yield stepSql(dialect, step);
    }
  }
  return flatten(building, layout);
}

/** The statement of one step other than a backfill or a build's. */
export function stepSql(
  dialect: SqlDialect,
  step: Exclude<MigrationStep, { kind: "backfill" | "cancelBuild" }>,
): SqlRequest {
  const { names, blobType } = dialect;
  switch (step.kind) {
    case "dropIndex":
      return { sql: `DROP INDEX IF EXISTS ${quote(step.name)}` };
    case "createTable":
      return {
        sql: `CREATE TABLE IF NOT EXISTS ${quote(names.table(step.table))} (id TEXT PRIMARY KEY, doc TEXT NOT NULL, ${quote(names.keyColumn(CREATION_INDEX))} ${blobType} NOT NULL)`,
      };
    case "dropColumn":
      return {
        sql: `ALTER TABLE ${quote(names.table(step.table))} DROP COLUMN ${quote(names.keyColumn(step.index))}`,
      };
    case "addColumn":
      return {
        sql: `ALTER TABLE ${quote(names.table(step.table))} ADD COLUMN ${quote(names.keyColumn(step.index))} ${blobType}`,
      };
    case "createIndex":
      return {
        sql: `CREATE INDEX IF NOT EXISTS ${quote(names.index(step.table, step.index))} ON ${quote(names.table(step.table))} (${quote(names.keyColumn(step.index))})`,
      };
    case "recordLayout":
      return {
        // The same upsert syntax on SQLite (3.24+) and PostgreSQL.
        sql: `INSERT INTO "_layout" (tbl, indexes) VALUES (${dialect.param(1)}, ${dialect.param(2)}) ON CONFLICT (tbl) DO UPDATE SET indexes = excluded.indexes`,
        params: [step.table, JSON.stringify(step.indexes)],
      };
  }
}

/** Computes new key columns in JS (the key encoding lives there, not in SQL), a batch at a time. */
function* backfill(dialect: SqlDialect, table: string, indexes: string[], keysOf: KeyFunction): SqlProgram {
  const t = quote(dialect.names.table(table));
  let after: string | null = null;
  for (;;) {
    const rows: Rows =
      after === null
        ? yield { sql: `SELECT id, doc FROM ${t} ORDER BY id LIMIT ${BACKFILL_BATCH}` }
        : yield {
            sql: `SELECT id, doc FROM ${t} WHERE id > ${dialect.param(1)} ORDER BY id LIMIT ${BACKFILL_BATCH}`,
            params: [after],
          };
    if (!rows.length) return;
    const batch = rows.map((r) => {
      const keys = keysOf(table, decodeDocument(String(r.doc)));
      return { id: String(r.id), keys: indexes.map((n) => keys[n]) };
    });
    for (const request of dialect.backfill(table, indexes, batch)) yield request;
    after = String(rows[rows.length - 1].id);
  }
}

/** Runs `program` with a synchronous `run` (SQLite inside a transaction); returns its result. */
export function runSync<R>(program: SqlQuery<R>, run: (request: SqlRequest) => Rows): R {
  let next = program.next();
  while (!next.done) next = program.next(run(next.value));
  return next.value;
}

/** Runs `program` with an asynchronous `run` (PostgreSQL on one connection); returns its result. */
export async function runAsync<R>(
  program: SqlQuery<R>,
  run: (request: SqlRequest) => Promise<Rows>,
): Promise<R> {
  let next = program.next();
  while (!next.done) next = program.next(await run(next.value));
  return next.value;
}
