/**
 * The layout migration as a pure function: from what the database holds (the `_layout` record,
 * columns, indexes) and the layout the schema wants, the steps that turn one into the other
 * without losing a document. No SQL here; `sql/migration.ts` reads the state and runs the steps.
 */
import type { StorageLayout } from "./engine.ts";
import type { SqlNames } from "./sql/names.ts";

/** The implicit index every table has; its key column is created with the table. */
export const CREATION_INDEX = "by_creation_time";

/** What the database holds before the migration. */
export interface PhysicalState {
  /** The `_layout` table: per schema table, the fields each of its indexes was built from. */
  recorded: Map<string, Record<string, string[]>>;
  /** Column names of every physical table. */
  columns: Map<string, Set<string>>;
  /** Every physical index name, with the physical table it belongs to. */
  indexes: Map<string, string>;
  /**
   * Indexes being built online (`index-build.ts`), as `table` → index names: the build, not the
   * migration, creates (PostgreSQL) or completes (SQLite) their SQL index.
   */
  building: Map<string, Set<string>>;
}

/** One migration step; `table` and `index` are schema names, `name` a physical index name. */
export type MigrationStep =
  | { kind: "dropIndex"; name: string }
  | { kind: "createTable"; table: string }
  | { kind: "dropColumn"; table: string; index: string }
  | { kind: "addColumn"; table: string; index: string }
  /**
   * Computes the new key columns of `indexes` from every stored document: at once on a small
   * table, else by an online build the migration only registers (`index-build.ts`).
   */
  | { kind: "backfill"; table: string; indexes: string[] }
  /** Forgets an unfinished online build whose index is dropped or changed. */
  | { kind: "cancelBuild"; table: string; index: string }
  | { kind: "createIndex"; table: string; index: string }
  | { kind: "recordLayout"; table: string; indexes: Record<string, string[]> };

/**
 * The steps migrating `state` to `wanted`, in order: every index drop first (a column cannot be
 * dropped under its index, and a name may move from one table to another), then per table:
 * create, drop changed key columns, add new ones, backfill them, create missing indexes (but not
 * those an unfinished online build will create), record.
 * Tables missing from `wanted` are left as they are. Running the steps and planning again yields
 * no steps.
 */
export function planMigration(wanted: StorageLayout, state: PhysicalState, names: SqlNames): MigrationStep[] {
  const drops: MigrationStep[] = [];
  const steps: MigrationStep[] = [];
  const indexes = new Map(state.indexes);
  const dropIndex = (name: string) => {
    if (indexes.delete(name)) drops.push({ kind: "dropIndex", name });
  };
  for (const [table, def] of Object.entries(wanted.tables)) {
    const physical = names.table(table);
    const existing = state.columns.get(physical);
    const columns = new Set(existing ?? ["id", "doc", names.keyColumn(CREATION_INDEX)]);
    if (!existing) steps.push({ kind: "createTable", table });
    const fields = new Map(def.indexes.map((i) => [i.name, i.fields]));
    const building = new Set(state.building.get(table));

    // Drop indexes that disappeared or changed their fields; (re)build the rest.
    for (const [index, before] of Object.entries(state.recorded.get(table) ?? {})) {
      if (JSON.stringify(fields.get(index)) === JSON.stringify(before)) continue;
      for (const name of [names.index(table, index), names.legacyIndex(table, index)]) {
        if (indexes.get(name) === physical) dropIndex(name);
      }
      if (building.delete(index)) steps.push({ kind: "cancelBuild", table, index });
      if (columns.delete(names.keyColumn(index))) steps.push({ kind: "dropColumn", table, index });
    }
    const backfill: string[] = [];
    for (const index of fields.keys()) {
      if (columns.has(names.keyColumn(index))) continue;
      columns.add(names.keyColumn(index));
      steps.push({ kind: "addColumn", table, index });
      backfill.push(index);
    }
    if (backfill.length) steps.push({ kind: "backfill", table, indexes: backfill });

    for (const index of [CREATION_INDEX, ...fields.keys()]) {
      const name = names.index(table, index);
      const legacy = names.legacyIndex(table, index);
      if (legacy !== name && indexes.get(legacy) === physical) dropIndex(legacy);
      if (indexes.get(name) === physical || building.has(index)) continue;
      // Taken by another table: an older version gave that table's index this name (sql/names.ts).
      dropIndex(name);
      indexes.set(name, physical);
      steps.push({ kind: "createIndex", table, index });
    }

    const record = Object.fromEntries(fields);
    const recorded = state.recorded.get(table);
    if (!recorded || JSON.stringify(recorded) !== JSON.stringify(record)) {
      steps.push({ kind: "recordLayout", table, indexes: record });
    }
  }
  return [...drops, ...steps];
}
