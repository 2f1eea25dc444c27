/**
 * Runs an online migration (see `defineMigration`): batch after batch, each one write transaction
 * through the backend's normal commit path (validated like a mutation's writes, published so live
 * queries re-run), with the migration's progress in `_migrations` updated in the same transaction.
 * A crash rolls back only the batch in flight; the next run resumes from the recorded cursor.
 */
import { stableStringify } from "../../protocol/stable-stringify.ts";
import type { DatabaseReaderImpl } from "../db/database.ts";
import type { BackendRuntime } from "../runtime.ts";
import type { StoredDocument } from "../storage/engine.ts";
import { findMismatch } from "../values/validate.ts";
import { DEFAULT_MIGRATION_BATCH, MAX_BATCH, type Migration } from "./migration.ts";
import { MIGRATIONS_TABLE } from "./tables.ts";

export interface MigrationProgress {
  name: string;
  table: string;
  processed: number;
  changed: number;
  batches: number;
  startedAt: number;
  finishedAt?: number;
}

export interface MigrationRunResult extends MigrationProgress {
  /** `already-done`: it had finished before this run, which changed nothing. */
  status: "done" | "already-done";
  /** Documents processed by earlier, interrupted runs when this run began. */
  resumedAfter: number;
}

export interface DryRunResult {
  name: string;
  table: string;
  /** Documents read. */
  documents: number;
  /** Documents `migrateOne` would change. */
  wouldChange: number;
  /** Changed documents the schema would refuse (the real run would stop at the first). */
  invalidAfter: number;
  /** The first refusal, e.g. `messages.body must be number (id …)`. */
  firstInvalid?: string;
}

export interface RunOptions {
  batchSize?: number;
  /** Called after each committed batch with the progress so far. */
  onBatch?: (progress: MigrationProgress) => void;
}

function batchSizeOf(migration: Migration<any>, options: RunOptions): number {
  const size = options.batchSize ?? migration.batchSize ?? DEFAULT_MIGRATION_BATCH;
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH) {
    throw new Error(`batch size must be a whole number from 1 to ${MAX_BATCH}`);
  }
  return size;
}

function checkTable(backend: BackendRuntime, migration: Migration<any>): void {
  if (migration.table.startsWith("_") || !backend.catalog.tables.has(migration.table)) {
    throw new Error(`the migration's table "${migration.table}" is not in the schema`);
  }
}

/** `doc` with `patch` applied as `db.patch` applies it. */
function patched(doc: StoredDocument, patch: Record<string, unknown>): Record<string, unknown> {
  const next: Record<string, unknown> = { ...doc };
  for (const [k, value] of Object.entries(patch)) {
    if (value === undefined) delete next[k];
    else next[k] = value;
  }
  return next;
}

/** The patch `migrateOne` returns for `doc`, or null when it leaves the document as it is. */
async function patchOf(
  migration: Migration<any>,
  doc: StoredDocument,
): Promise<Record<string, unknown> | null> {
  // A copy: a `migrateOne` that edits its argument must not change what we compare against.
  const patch = await migration.migrateOne(structuredClone(doc));
  if (patch === undefined || patch === null) return null;
  if (typeof patch !== "object" || Array.isArray(patch)) {
    throw new Error(`migrateOne must return an object of fields to change or nothing (document ${doc._id})`);
  }
  const p = patch as Record<string, unknown>;
  return stableStringify(patched(doc, p)) === stableStringify(doc) ? null : p;
}

async function progressRow(db: DatabaseReaderImpl, name: string) {
  return db
    .query(MIGRATIONS_TABLE)
    .withIndex("name", (q) => q.eq("name", name))
    .first() as Promise<(StoredDocument & MigrationProgress & { cursor: string }) | null>;
}

function progressOf(row: MigrationProgress): MigrationProgress {
  const { name, table, processed, changed, batches, startedAt, finishedAt } = row;
  return {
    name,
    table,
    processed,
    changed,
    batches,
    startedAt,
    ...(finishedAt === undefined ? {} : { finishedAt }),
  };
}

/** Where migration `name` stands, or null if it never ran. */
export async function migrationProgress(
  backend: BackendRuntime,
  name: string,
): Promise<MigrationProgress | null> {
  const row = await backend.read((db) => progressRow(db, name));
  return row ? progressOf(row) : null;
}

/** Runs (or resumes) migration `name` to its end, one transaction per batch. */
export async function runMigration(
  backend: BackendRuntime,
  name: string,
  migration: Migration<any>,
  options: RunOptions = {},
): Promise<MigrationRunResult> {
  checkTable(backend, migration);
  const numItems = batchSizeOf(migration, options);
  const before = await migrationProgress(backend, name);
  if (before && before.table !== migration.table) {
    throw new Error(`migration "${name}" ran on table "${before.table}" before, not "${migration.table}"`);
  }
  if (before?.finishedAt !== undefined)
    return { ...before, status: "already-done", resumedAfter: before.processed };
  for (;;) {
    const { progress, done } = await backend.write(async (db) => {
      // Read inside the batch's transaction: two runners at once take turns, never the same batch.
      const row = await progressRow(db, name);
      const current: MigrationProgress & { cursor: string } = row ?? {
        name,
        table: migration.table,
        cursor: "",
        processed: 0,
        changed: 0,
        batches: 0,
        startedAt: Date.now(),
      };
      if (current.finishedAt !== undefined) return { progress: progressOf(current), done: true };
      const page = await db.query(migration.table).paginate({ cursor: current.cursor || null, numItems });
      let changed = 0;
      for (const doc of page.page) {
        const patch = await patchOf(migration, doc);
        if (!patch) continue;
        await db.patch(doc._id, patch);
        changed++;
      }
      const finished = page.isDone || page.page.length === 0;
      const next = {
        name,
        table: migration.table,
        cursor: page.page.length > 0 ? page.continueCursor : current.cursor,
        processed: current.processed + page.page.length,
        changed: current.changed + changed,
        batches: current.batches + 1,
        startedAt: current.startedAt,
        ...(finished ? { finishedAt: Date.now() } : {}),
      };
      if (row) await db.replace(row._id, next);
      else await db.insert(MIGRATIONS_TABLE, next);
      return { progress: progressOf(next), done: finished };
    });
    options.onBatch?.(progress);
    if (done) return { ...progress, status: "done", resumedAfter: before?.processed ?? 0 };
  }
}

/** Reads every document as the migration would, in read snapshots, and counts what would change. */
export async function dryRunMigration(
  backend: BackendRuntime,
  name: string,
  migration: Migration<any>,
  options: RunOptions = {},
): Promise<DryRunResult> {
  checkTable(backend, migration);
  const numItems = batchSizeOf(migration, options);
  const fields = backend.catalog.table(migration.table).definition.fields;
  const validator = { kind: "object", fields, isOptional: false } as const;
  const result: DryRunResult = {
    name,
    table: migration.table,
    documents: 0,
    wouldChange: 0,
    invalidAfter: 0,
  };
  let cursor: string | null = null;
  for (;;) {
    const page = await backend.read((db) => db.query(migration.table).paginate({ cursor, numItems }));
    for (const doc of page.page) {
      result.documents++;
      const patch = await patchOf(migration, doc);
      if (!patch) continue;
      result.wouldChange++;
      const { _id, _creationTime, ...after } = patched(doc, patch);
      const mismatch = findMismatch(validator as never, after, migration.table);
      if (mismatch) {
        result.invalidAfter++;
        result.firstInvalid ??= `${mismatch[0]} must be ${mismatch[1]} (document ${doc._id})`;
      }
    }
    if (page.isDone || page.page.length === 0) return result;
    cursor = page.continueCursor;
  }
}
