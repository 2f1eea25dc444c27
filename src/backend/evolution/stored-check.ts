/**
 * Checks stored documents against the schema: every table whose validator changed since its
 * documents were last verified is read in batches, each in its own short read snapshot (memory
 * stays bounded and no write waits on the check), and its violations are summed per field.
 * Tables whose fingerprint matches the one recorded in `_schema_checks` are skipped: documents
 * written since were validated on write against that same validator.
 */

import { isAppError } from "../errors.ts";
import { logger } from "../logger.ts";
import type { BackendRuntime } from "../runtime.ts";
import { StartRefusal } from "../start-refusal.ts";
import { findMismatch } from "../values/validate.ts";
import { validatorFingerprint } from "./fingerprint.ts";
import { SCHEMA_CHECKS_TABLE } from "./tables.ts";

/** Documents per read snapshot; a batch is the most the check holds in memory at once. */
export const DEFAULT_CHECK_BATCH = 500;
/** A large table says how far the check got every this many documents. */
const PROGRESS_EVERY = 100_000;
/** How many ids of violating documents a violation keeps (the count is exact). */
const EXAMPLE_IDS = 3;

/**
 * Documents of one table that fail the same field the same way.
 *
 * @example
 * ```ts
 * import type { FieldViolation } from "service-auth/server";
 *
 * function describe(v: FieldViolation): string {
 *   return `${v.documents} documents of ${v.table} fail ${v.path} (expected ${v.expected})`;
 * }
 * ```
 */
export interface FieldViolation {
  table: string;
  /** The validation path, e.g. `messages.body` or `posts.tags[]` (array positions left out). */
  path: string;
  /** What the schema expects there, e.g. `number`, or `no such field` for an undeclared field. */
  expected: string;
  documents: number;
  /** A few ids of such documents. */
  ids: string[];
}

export interface SchemaCheckReport {
  /** Tables whose documents were read. */
  checked: string[];
  /** Tables skipped because their validator is the one verified before. */
  unchanged: string[];
  /** Documents read. */
  documents: number;
  violations: FieldViolation[];
}

export interface SchemaCheckOptions {
  batchSize?: number;
  /** Read every table, also those verified before (`schema check --all`). */
  all?: boolean;
  /**
   * Remember the tables found valid (default true). The CLI's check does not: its schema may be a
   * new version checked ahead of a deploy, while the running servers still write the old shape.
   */
  record?: boolean;
}

/** Checks the tables whose validator changed; records those found valid. */
export async function checkStoredDocuments(
  backend: BackendRuntime,
  options: SchemaCheckOptions = {},
): Promise<SchemaCheckReport> {
  const batchSize = options.batchSize ?? DEFAULT_CHECK_BATCH;
  const verified = new Map<string, string>();
  for (const row of await backend.read((db) => db.query(SCHEMA_CHECKS_TABLE).collect())) {
    verified.set(row.table as string, row.fingerprint as string);
  }
  const report: SchemaCheckReport = { checked: [], unchanged: [], documents: 0, violations: [] };
  const valid: { table: string; fingerprint: string; documents: number }[] = [];
  const invalid: string[] = [];
  for (const [name, info] of backend.catalog.tables) {
    const fingerprint = validatorFingerprint(info.definition);
    if (!options.all && verified.get(name) === fingerprint) {
      report.unchanged.push(name);
      continue;
    }
    report.checked.push(name);
    const { documents, violations } = await checkTable(backend, name, batchSize);
    report.documents += documents;
    report.violations.push(...violations);
    if (violations.length === 0) valid.push({ table: name, fingerprint, documents });
    // Found invalid (by `--all`, say, after a rolling deploy): no start may skip it any more.
    else if (verified.has(name)) invalid.push(name);
  }
  const record = options.record ?? true;
  if (invalid.length > 0) await updateVerified(backend, record ? valid : [], invalid);
  else if (record && valid.length > 0) {
    // Only a cache of work done: when another process holds the write lock (or the database is
    // away) the start goes on, and the next one reads these tables again.
    await updateVerified(backend, valid, []).catch((error) => {
      if (!isAppError(error)) throw error;
      logger.warn("schema check: could not record the verified tables; the next start reads them again", {
        tables: valid.map((v) => v.table),
        code: error.code,
      });
    });
  }
  return report;
}

async function checkTable(
  backend: BackendRuntime,
  table: string,
  batchSize: number,
): Promise<{ documents: number; violations: FieldViolation[] }> {
  const validator = {
    kind: "object",
    fields: backend.catalog.table(table).definition.fields,
    isOptional: false,
  };
  const byField = new Map<string, FieldViolation>();
  let documents = 0;
  let cursor: string | null = null;
  for (;;) {
    const page = await backend.read((db) => db.query(table).paginate({ cursor, numItems: batchSize }));
    for (const doc of page.page) {
      if (++documents % PROGRESS_EVERY === 0) logger.info("schema check: reading", { table, documents });
      const { _id, _creationTime, ...fields } = doc;
      const mismatch = findMismatch(validator as never, fields, table);
      if (!mismatch) continue;
      const [at, expected] = mismatch;
      const path = at.replace(/\[\d+\]/g, "[]");
      const key = `${path}\u0000${expected}`;
      let violation = byField.get(key);
      if (!violation) byField.set(key, (violation = { table, path, expected, documents: 0, ids: [] }));
      violation.documents++;
      if (violation.ids.length < EXAMPLE_IDS) violation.ids.push(_id);
    }
    if (page.isDone || page.page.length === 0) break;
    cursor = page.continueCursor;
  }
  return { documents, violations: [...byField.values()] };
}

/** Upserts the verified fingerprints and forgets those of `invalid` tables, in one transaction. */
async function updateVerified(
  backend: BackendRuntime,
  valid: { table: string; fingerprint: string; documents: number }[],
  invalid: string[],
): Promise<void> {
  await backend.write(async (db) => {
    const rowOf = (table: string) =>
      db
        .query(SCHEMA_CHECKS_TABLE)
        .withIndex("table", (q) => q.eq("table", table))
        .first();
    const now = Date.now();
    for (const { table, fingerprint, documents } of valid) {
      const row = await rowOf(table);
      const value = { table, fingerprint, documents, checkedAt: now };
      if (row) await db.replace(row._id, value);
      else await db.insert(SCHEMA_CHECKS_TABLE, value);
    }
    for (const table of invalid) {
      const row = await rowOf(table);
      if (row) await db.delete(row._id);
    }
  });
}

/**
 * Forgets the verification of every table whose validator here differs from the verified one. A
 * process that writes without checking first (the CLI) calls it: its writes are validated against
 * its own schema only, so a later start with the verified schema must read those tables again.
 */
export async function forgetChangedVerifications(backend: BackendRuntime): Promise<void> {
  const stale = (await backend.read((db) => db.query(SCHEMA_CHECKS_TABLE).collect())).filter((row) => {
    const info = backend.catalog.tables.get(row.table as string);
    return info && validatorFingerprint(info.definition) !== row.fingerprint;
  });
  if (stale.length === 0) return;
  await backend.write(async (db) => {
    for (const row of stale) if (await db.get(row._id)) await db.delete(row._id);
  });
}

/** One line per violation: the table, the field, how many documents and a few ids. */
export function describeViolation(v: FieldViolation): string {
  const docs = `${v.documents} document${v.documents === 1 ? "" : "s"} of table "${v.table}"`;
  const what =
    v.expected === "no such field"
      ? `have the field ${v.path}, which the schema does not declare`
      : `do not match ${v.path}: it must be ${v.expected}`;
  const more = v.documents > v.ids.length ? ", …" : "";
  return `${docs} ${what} (e.g. ${v.ids.join(", ")}${more})`;
}

/** What to do about violations: the recipe of README "Changing the schema". */
export const SCHEMA_FIX_HINT =
  "Make the field optional (v.optional(...)) or a union of the old and new types (v.union(...)) so " +
  "the stored documents are valid, migrate them (`npm run cli -- migrate NAME`, see README " +
  '"Changing the schema"), then narrow the field again.';

/**
 * The schema check's refusal to start, with every violation and what to do.
 *
 * @example
 * ```ts
 * import { SchemaCheckRefusal, startService } from "service-auth/server";
 *
 * try {
 *   await startService(app);
 * } catch (error) {
 *   if (error instanceof SchemaCheckRefusal) {
 *     for (const v of error.violations) console.error(`${v.table}: ${v.path} must be ${v.expected}`);
 *     process.exit(1);
 *   }
 *   throw error;
 * }
 * ```
 */
export class SchemaCheckRefusal extends StartRefusal {
  constructor(readonly violations: FieldViolation[]) {
    super(
      `refusing to start: stored documents do not match the schema:\n${violations
        .map((v) => `  ${describeViolation(v)}`)
        .join("\n")}\n${SCHEMA_FIX_HINT} To start anyway, set SCHEMA_CHECK=warn.`,
    );
  }
}
