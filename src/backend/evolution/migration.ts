/** `defineMigration`: an online migration of one table's documents, one document at a time. */
import type { StoredDocument } from "../storage/engine.ts";

/**
 * The fields to change in a document (`undefined` removes a field); nothing to leave it as it is.
 *
 * @example
 * ```ts
 * import type { DocOf, MigrationPatch } from "service-auth/server";
 * import type schema from "./schema.ts";
 *
 * type Message = DocOf<typeof schema, "messages">;
 * const trim = (doc: Message): MigrationPatch<Message> =>
 *   doc.body.trim() === doc.body ? undefined : { body: doc.body.trim() };
 * ```
 */
export type MigrationPatch<Doc> = Partial<Omit<Doc, "_id" | "_creationTime">> | undefined;

/**
 * A migration made by {@link defineMigration}.
 *
 * @example
 * ```ts
 * import { type DocOf, defineMigration, type Migration } from "service-auth/server";
 * import type schema from "./schema.ts";
 *
 * type Message = DocOf<typeof schema, "messages">;
 * export const trimMessageBodies: Migration<Message> = defineMigration<Message>({
 *   table: "messages",
 *   migrateOne: (doc) => (doc.body.trim() === doc.body ? undefined : { body: doc.body.trim() }),
 *   batchSize: 200,
 * });
 * ```
 */
export interface Migration<Doc extends StoredDocument = StoredDocument> {
  readonly table: string;
  readonly migrateOne: (doc: Doc) => MigrationPatch<Doc> | Promise<MigrationPatch<Doc>>;
  /** Documents per batch (each batch is one transaction); default 100. */
  readonly batchSize?: number;
}

/**
 * Declares an online migration: `service-auth migrate NAME` (`npm run cli -- migrate NAME`) calls
 * `migrateOne` for every document of `table`, in creation order, and applies the patch it returns
 * like `ctx.db.patch` (validated against the schema; a field set to `undefined` is removed).
 *
 * It runs while the service serves: documents are read and patched in batches of `batchSize`,
 * each batch one transaction that also records how far the migration got, so a crash loses at
 * most the batch in flight and the next run resumes after the last committed batch (no document
 * is migrated twice). Every batch commits like a mutation, so live queries update as it goes.
 * `--dry-run` reports how many documents would change without writing.
 *
 * `migrateOne` must depend only on the document: a batch may run again after a write conflict.
 * Register migrations in the app's `ServiceOptions.migrations` under the name the CLI takes.
 *
 * @example
 * // Widen (`plan: v.optional(v.string())`), then backfill, then make `plan` required.
 * export const backfillPlan = defineMigration<DocOf<typeof schema, "accounts">>({
 *   table: "accounts",
 *   migrateOne: (doc) => (doc.plan === undefined ? { plan: "free" } : undefined),
 * });
 * // app: { ...options, migrations: { backfillPlan } }
 * // shell: npm run cli -- migrate backfillPlan --dry-run; npm run cli -- migrate backfillPlan
 */
export function defineMigration<Doc extends StoredDocument = StoredDocument>(migration: {
  table: string;
  migrateOne: (doc: Doc) => MigrationPatch<Doc> | Promise<MigrationPatch<Doc>>;
  batchSize?: number;
}): Migration<Doc> {
  if (typeof migration.table !== "string" || migration.table.startsWith("_")) {
    throw new Error(`defineMigration: "${migration.table}" is not an application table`);
  }
  const { batchSize } = migration;
  if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH)) {
    throw new Error(`defineMigration: batchSize must be a whole number from 1 to ${MAX_BATCH}`);
  }
  return { ...migration };
}

/** Default documents per batch: small transactions, so writers never wait long for one. */
export const DEFAULT_MIGRATION_BATCH = 100;
/** Largest batch: bounds the memory and the length of one transaction. */
export const MAX_BATCH = 10_000;
