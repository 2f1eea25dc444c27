/** The pure layout diff (`planMigration`) and the identifiers it plans with. */
import { describe, expect, it } from "vitest";
import type { StorageLayout } from "../../src/backend/storage/engine.ts";
import {
  type MigrationStep,
  type PhysicalState,
  planMigration,
} from "../../src/backend/storage/layout-diff.ts";
import { sqlNames } from "../../src/backend/storage/sql/names.ts";

const names = sqlNames();

const empty = (): PhysicalState => ({
  recorded: new Map(),
  columns: new Map(),
  indexes: new Map(),
  building: new Map(),
});

/** What a database holds after running `steps` on `state` (the engines' SQL, simulated). */
function apply(state: PhysicalState, steps: MigrationStep[]): PhysicalState {
  const next: PhysicalState = {
    recorded: new Map(state.recorded),
    columns: new Map([...state.columns].map(([t, c]) => [t, new Set(c)])),
    indexes: new Map(state.indexes),
    building: new Map([...state.building].map(([t, b]) => [t, new Set(b)])),
  };
  const columnsOf = (table: string) => next.columns.get(names.table(table)) as Set<string>;
  for (const step of steps) {
    switch (step.kind) {
      case "dropIndex":
        expect(next.indexes.delete(step.name)).toBe(true);
        break;
      case "createTable":
        expect(next.columns.has(names.table(step.table))).toBe(false);
        next.columns.set(names.table(step.table), new Set(["id", "doc", "k_by_creation_time"]));
        break;
      case "dropColumn":
        // Neither engine drops a column an index still uses.
        for (const name of [names.index(step.table, step.index), names.legacyIndex(step.table, step.index)])
          expect(next.indexes.get(name)).not.toBe(names.table(step.table));
        expect(columnsOf(step.table).delete(names.keyColumn(step.index))).toBe(true);
        break;
      case "addColumn":
        expect(columnsOf(step.table).has(names.keyColumn(step.index))).toBe(false);
        columnsOf(step.table).add(names.keyColumn(step.index));
        break;
      case "backfill":
        for (const i of step.indexes) expect(columnsOf(step.table).has(names.keyColumn(i))).toBe(true);
        break;
      case "cancelBuild":
        expect(next.building.get(step.table)?.delete(step.index)).toBe(true);
        break;
      case "createIndex": {
        const name = names.index(step.table, step.index);
        expect(next.indexes.has(name)).toBe(false);
        expect(columnsOf(step.table).has(names.keyColumn(step.index))).toBe(true);
        next.indexes.set(name, names.table(step.table));
        break;
      }
      case "recordLayout":
        next.recorded.set(step.table, JSON.parse(JSON.stringify(step.indexes)));
        break;
    }
  }
  return next;
}

const layout = (tables: Record<string, Record<string, string[]>>): StorageLayout => ({
  tables: Object.fromEntries(
    Object.entries(tables).map(([t, idx]) => [
      t,
      { indexes: Object.entries(idx).map(([name, fields]) => ({ name, fields })) },
    ]),
  ),
});

/** Plans, applies, and checks that planning again finds nothing to do. */
function migrate(state: PhysicalState, wanted: StorageLayout) {
  const steps = planMigration(wanted, state, names);
  const after = apply(state, steps);
  expect(planMigration(wanted, after, names)).toEqual([]);
  return { steps, after };
}

describe("planMigration", () => {
  it("creates a new table with a key column and an index per declared index, then records it", () => {
    const { steps, after } = migrate(empty(), layout({ people: { by_city: ["city", "age"] } }));
    expect(steps).toEqual([
      { kind: "createTable", table: "people" },
      { kind: "addColumn", table: "people", index: "by_city" },
      { kind: "backfill", table: "people", indexes: ["by_city"] },
      { kind: "createIndex", table: "people", index: "by_creation_time" },
      { kind: "createIndex", table: "people", index: "by_city" },
      { kind: "recordLayout", table: "people", indexes: { by_city: ["city", "age"] } },
    ]);
    expect(after.indexes).toEqual(
      new Map([
        ["i_people_by_creation_time", "t_people"],
        ["i_people_by_city", "t_people"],
      ]),
    );
  });

  it("adds and backfills only new indexes, keeping unchanged ones", () => {
    const v1 = migrate(empty(), layout({ people: { by_city: ["city"] } })).after;
    const { steps } = migrate(v1, layout({ people: { by_city: ["city"], by_name: ["name"] } }));
    expect(steps).toEqual([
      { kind: "addColumn", table: "people", index: "by_name" },
      { kind: "backfill", table: "people", indexes: ["by_name"] },
      { kind: "createIndex", table: "people", index: "by_name" },
      { kind: "recordLayout", table: "people", indexes: { by_city: ["city"], by_name: ["name"] } },
    ]);
  });

  it("rebuilds an index whose fields changed and drops one that disappeared, indexes first", () => {
    const v1 = migrate(empty(), layout({ people: { by_city: ["city"], by_name: ["name"] } })).after;
    const { steps } = migrate(v1, layout({ people: { by_city: ["age"] } }));
    expect(steps).toEqual([
      { kind: "dropIndex", name: "i_people_by_city" },
      { kind: "dropIndex", name: "i_people_by_name" },
      { kind: "dropColumn", table: "people", index: "by_city" },
      { kind: "dropColumn", table: "people", index: "by_name" },
      { kind: "addColumn", table: "people", index: "by_city" },
      { kind: "backfill", table: "people", indexes: ["by_city"] },
      { kind: "createIndex", table: "people", index: "by_city" },
      { kind: "recordLayout", table: "people", indexes: { by_city: ["age"] } },
    ]);
  });

  it("leaves tables that left the schema untouched", () => {
    const v1 = migrate(empty(), layout({ a: { by_x: ["x"] }, b: {} })).after;
    const { steps, after } = migrate(v1, layout({ b: {} }));
    expect(steps).toEqual([]);
    expect(after).toEqual(v1);
  });

  it("renames an index an older version named ambiguously, and gives the freed name to its owner", () => {
    // Both wanted `i_a_b_c` before underscores were escaped; the first table created got it.
    const legacy: PhysicalState = {
      recorded: new Map<string, Record<string, string[]>>([
        ["a_b", { c: ["x"] }],
        ["a", { b_c: ["y"] }],
      ]),
      columns: new Map([
        ["t_a_b", new Set(["id", "doc", "k_by_creation_time", "k_c"])],
        ["t_a", new Set(["id", "doc", "k_by_creation_time", "k_b_c"])],
      ]),
      indexes: new Map([
        ["i_a_b_by_creation_time", "t_a_b"],
        ["i_a_b_c", "t_a_b"],
        ["i_a_by_creation_time", "t_a"],
      ]),
      building: new Map(),
    };
    for (const wanted of [
      layout({ a_b: { c: ["x"] }, a: { b_c: ["y"] } }),
      layout({ a: { b_c: ["y"] }, a_b: { c: ["x"] } }),
    ]) {
      const { steps, after } = migrate(legacy, wanted);
      expect(steps.filter((s) => s.kind === "dropIndex")).toEqual([
        { kind: "dropIndex", name: expect.any(String) },
        { kind: "dropIndex", name: expect.any(String) },
      ]);
      // No column is dropped or backfilled: only indexes move.
      expect(steps.every((s) => s.kind === "dropIndex" || s.kind === "createIndex")).toBe(true);
      expect(after.indexes).toEqual(
        new Map([
          ["i_a__b_by_creation_time", "t_a_b"],
          ["i_a__b_c", "t_a_b"],
          ["i_a_by_creation_time", "t_a"],
          ["i_a_b_c", "t_a"],
        ]),
      );
    }
  });
});

describe("planMigration with online index builds", () => {
  /** v1 with `by_name` added and registered as an online build (its SQL index not made yet, as on PostgreSQL). */
  function building() {
    const v1 = migrate(empty(), layout({ people: { by_city: ["city"] } })).after;
    const v2 = layout({ people: { by_city: ["city"], by_name: ["name"] } });
    const steps = planMigration(v2, v1, names).filter(
      (s) => !(s.kind === "createIndex" && s.index === "by_name"),
    );
    const after = apply(v1, steps);
    after.building.set("people", new Set(["by_name"]));
    return { v2, after };
  }

  it("leaves the SQL index of an unfinished build to the build", () => {
    const { v2, after } = building();
    expect(planMigration(v2, after, names)).toEqual([]);
  });

  it("cancels an unfinished build whose index changed or disappeared", () => {
    const { after } = building();
    expect(planMigration(layout({ people: { by_city: ["city"], by_name: ["age"] } }), after, names)).toEqual([
      { kind: "cancelBuild", table: "people", index: "by_name" },
      { kind: "dropColumn", table: "people", index: "by_name" },
      { kind: "addColumn", table: "people", index: "by_name" },
      { kind: "backfill", table: "people", indexes: ["by_name"] },
      { kind: "createIndex", table: "people", index: "by_name" },
      { kind: "recordLayout", table: "people", indexes: { by_city: ["city"], by_name: ["age"] } },
    ]);
    const { steps } = migrate(after, layout({ people: { by_city: ["city"] } }));
    expect(steps).toEqual([
      { kind: "cancelBuild", table: "people", index: "by_name" },
      { kind: "dropColumn", table: "people", index: "by_name" },
      { kind: "recordLayout", table: "people", indexes: { by_city: ["city"] } },
    ]);
  });
});

describe("SQL names", () => {
  it("keep the names earlier versions gave tables without inner underscores", () => {
    for (const [table, index] of [
      ["people", "by_city"],
      ["_env", "by_creation_time"],
      ["User2", "by_email_verified"],
    ]) {
      expect(names.index(table, index)).toBe(names.legacyIndex(table, index));
      expect(names.index(table, index)).toBe(`i_${table}_${index}`);
    }
    expect(names.table("people")).toBe("t_people");
    expect(names.keyColumn("by_city")).toBe("k_by_city");
  });

  it("give every (table, index) pair its own index name", () => {
    const tables = ["a", "a_b", "a_b_c", "a__b", "_a", "_a_b", "ab", "a_"];
    const indexes = ["b", "c", "b_c", "c_d", "b__c", "by_creation_time"];
    const seen = new Map<string, string>();
    for (const t of tables) {
      for (const i of indexes) {
        const name = names.index(t, i);
        expect(seen.get(name), `${t}.${i} vs ${seen.get(name)}`).toBeUndefined();
        seen.set(name, `${t}.${i}`);
      }
    }
    expect(names.legacyIndex("a_b", "c")).toBe(names.legacyIndex("a", "b_c"));
  });

  it("shorten long names within the byte limit, distinct and stable", () => {
    const pg = sqlNames(63);
    const long = "x".repeat(70);
    const a = pg.table(`${long}a`);
    const b = pg.table(`${long}b`);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(pg.table(`${long}a`)).toBe(a);
    expect(pg.table("people")).toBe("t_people");
    expect(Buffer.byteLength(pg.index("é".repeat(40), "by_x"))).toBeLessThanOrEqual(63);
  });
});
