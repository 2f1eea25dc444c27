/**
 * The engine's statements are named prepared statements (postgres/transaction.ts `sendPrepared`):
 * each connection parses and plans a statement text once, however often it runs; through a
 * transaction-mode pooler (`pooler: "transaction"`, postgres/pooler.ts) they go unnamed, since the
 * next transaction may run on a server connection that never saw the name.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";

const schema = defineSchema({ people: defineTable({ name: v.string() }) });

describe.skipIf(!postgresBinDir)("PostgreSQL prepared statements", () => {
  const server = usePostgres();

  /** An engine on one pooled connection that wrote and read `people` a few times. */
  async function used(pooler: "none" | "transaction") {
    const url = await server().createDatabase();
    const engine = new PostgresEngine({ connectionString: url, maxConnections: 1, pooler });
    const catalog = new Catalog(schema);
    await engine.migrate(catalog.layout(), catalog.keysOf);
    for (let i = 0; i < 3; i++) {
      const doc = { _id: `p${i}`, _creationTime: i + 1, name: `person ${i}` };
      await engine.write((tx) => tx.insert("people", doc, catalog.keysOf("people", doc)));
      expect(await engine.read((tx) => tx.get("people", doc._id))).toMatchObject({ name: doc.name });
    }
    // The pool's one connection: the session the statements above ran in.
    const pool = (engine as unknown as { pools: { main: pg.Pool } }).pools.main;
    const { rows } = await pool.query<{ name: string; statement: string }>(
      "SELECT name, statement FROM pg_prepared_statements ORDER BY name",
    );
    await engine.close();
    return rows;
  }

  it("names each statement once per connection, however often it runs", async () => {
    const rows = await used("none");
    const insert = rows.filter((r) => /^INSERT INTO "t_people"/.test(r.statement));
    const get = rows.filter((r) => /^SELECT .* FROM "t_people"/s.test(r.statement));
    // Three inserts and three reads, each text prepared once under its own name.
    expect(insert).toHaveLength(1);
    expect(get).toHaveLength(1);
    for (const row of [...insert, ...get]) expect(row.name).toMatch(/^sa_[0-9a-f]{20}$/);
  }, 60_000);

  it("sends them unnamed through a transaction-mode pooler", async () => {
    expect(await used("transaction")).toEqual([]);
  }, 60_000);
});
