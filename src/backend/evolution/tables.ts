/**
 * The platform's schema-evolution metadata, stored as system tables beside the application's (so
 * a migration's progress commits in the same transaction as the documents it changed):
 * - `_schema_checks`: per table, the fingerprint of the validator its stored documents were last
 *   verified against (one row per table: after A → B → A the documents written under B must be
 *   checked against A again, so only the latest verified fingerprint counts);
 * - `_migrations`: per online migration, where it stands (cursor, counts, finished).
 */
import { defineTable } from "../schema.ts";
import { v } from "../values/validators.ts";

export const SCHEMA_CHECKS_TABLE = "_schema_checks";
export const MIGRATIONS_TABLE = "_migrations";

export const EVOLUTION_TABLES = {
  [SCHEMA_CHECKS_TABLE]: defineTable({
    table: v.string(),
    fingerprint: v.string(),
    /** How many documents the check read. */
    documents: v.number(),
    checkedAt: v.number(),
  }).index("table", ["table"]),
  [MIGRATIONS_TABLE]: defineTable({
    name: v.string(),
    table: v.string(),
    /** The `paginate` cursor after the last migrated document ("" before the first batch). */
    cursor: v.string(),
    processed: v.number(),
    changed: v.number(),
    batches: v.number(),
    startedAt: v.number(),
    finishedAt: v.optional(v.number()),
  }).index("name", ["name"]),
};
