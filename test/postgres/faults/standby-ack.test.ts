/**
 * `DATABASE_DURABILITY=standby` (storage/postgres/standby-ack.ts): a write is acknowledged only
 * once a streaming standby has flushed it, whatever the primary's replication settings. The
 * primary here replicates asynchronously (no `synchronous_standby_names`), as a pg_auto_failover
 * primary does in `wait_primary` or in the switchover race that lost acknowledged writes once in
 * the failover test (issue 24). The fault: the standby's WAL receiver frozen (SIGSTOP), so nothing
 * more reaches it, while the primary goes on committing.
 */
import { describe, expect, it } from "vitest";
import { Catalog } from "../../../src/backend/db/catalog.ts";
import { defineSchema, defineTable } from "../../../src/backend/schema.ts";
import { StartRefusal } from "../../../src/backend/start-refusal.ts";
import { PostgresEngine } from "../../../src/backend/storage/postgres/engine.ts";
import { v } from "../../../src/backend/values/index.ts";
import { counterBy } from "../../helpers/metrics.ts";
import { postgresBinDir, usePostgres } from "../../helpers/postgres.ts";
import { startStandby } from "../../helpers/postgres-standby.ts";
import { eventually } from "../../helpers/wait.ts";

const schema = defineSchema({ notes: defineTable({ text: v.string() }) });
const catalog = new Catalog(schema);

async function insert(engine: PostgresEngine, n: number): Promise<void> {
  const doc = { _id: `n${n}`, _creationTime: n, text: `note ${n}` };
  await engine.write((tx) => tx.insert("notes", doc, catalog.keysOf("notes", doc)));
}

async function engineOn(url: string, options: Partial<ConstructorParameters<typeof PostgresEngine>[0]> = {}) {
  const engine = new PostgresEngine({ connectionString: url, ...options });
  await engine.migrate(catalog.layout(), catalog.keysOf);
  return engine;
}

/** Acknowledgements by outcome (`service_auth_db_standby_acks_total`) in this process so far. */
const acks = () => counterBy("service_auth_db_standby_acks_total", "outcome");

describe.skipIf(!postgresBinDir)("DATABASE_DURABILITY=standby", () => {
  // An asynchronous standby: COMMIT on the primary never waits for it.
  const primary = usePostgres(["synchronous_commit=on"]);

  it("acknowledges a write once the standby flushed it, and never one the standby does not have", async () => {
    const url = await primary().createDatabase();
    const standby = await startStandby(primary());
    const engines: PostgresEngine[] = [];
    let receiver: number | undefined;
    try {
      // Gives up on a standby after 1 s; the patient one waits long enough to see it come back.
      const strict = await engineOn(url, { durability: "standby", standbyAckWaitMs: 1000 });
      // One pooled connection: a commit waiting for the standby must not keep it from the others.
      const patient = await engineOn(url, {
        durability: "standby",
        standbyAckWaitMs: 120_000,
        maxConnections: 1,
        connectTimeoutMs: 20_000,
      });
      const loose = await engineOn(url);
      engines.push(strict, patient, loose);
      const before = await acks();
      await insert(strict, 1);

      const [row] = await standby.sql<{ pid: number }>("SELECT pid FROM pg_stat_wal_receiver");
      receiver = row.pid;
      process.kill(receiver, "SIGSTOP");
      await expect(insert(strict, 2)).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
      // Without the setting the same write is acknowledged although no standby has it.
      await insert(loose, 3);
      const [{ lsn }] = await primary().sql("SELECT pg_current_wal_flush_lsn()::text AS lsn");
      const [{ has }] = await standby.sql("SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn AS has", [lsn]);
      expect(has, "the standby received the unconfirmed write").toBe(false);

      // Committed on the primary, but not acknowledged while nothing reaches the standby.
      let acknowledged = false;
      const waiting = insert(patient, 4).then(() => {
        acknowledged = true;
      });
      await eventually(async () =>
        expect(
          await primary().sql("SELECT count(*)::int AS n FROM t_notes WHERE id = 'n4'", [], url),
        ).toEqual([{ n: 1 }]),
      );
      expect(acknowledged).toBe(false);
      // The waiting commit gave its connection back: the engine's one connection serves a read.
      const read = await patient.read(async (tx) =>
        tx.scan({ table: "notes", index: "by_creation_time", range: {}, order: "asc", limit: 10 }),
      );
      expect(read.map((row) => row.doc._id)).toEqual(["n1", "n2", "n3", "n4"]);
      expect(acknowledged).toBe(false);
      process.kill(receiver, "SIGCONT");
      receiver = undefined;
      await waiting;
      expect(acknowledged).toBe(true);
      // Writes 1 and 4 acknowledged (at once, or after waiting: an asynchronous standby may take a
      // moment), write 2 not; the loose engine counts nothing.
      const after = await acks();
      const delta = (outcome: string) => (after[outcome] ?? 0) - (before[outcome] ?? 0);
      expect(delta("unconfirmed")).toBe(1);
      expect(delta("waited")).toBeGreaterThanOrEqual(1);
      expect(delta("flushed") + delta("waited")).toBe(2);
      // Write 2, answered 503, is committed on the primary all the same: the outcome it left open.
      expect(
        (await primary().sql("SELECT id FROM t_notes ORDER BY id", [], url)).map((r: { id: string }) => r.id),
      ).toEqual(["n1", "n2", "n3", "n4"]);
    } finally {
      if (receiver !== undefined) process.kill(receiver, "SIGCONT");
      for (const engine of engines) await engine.close();
      await standby.stop();
    }
  }, 120_000);

  it("refuses to start with a role that cannot see its standbys' progress, or with synchronous_commit off", async () => {
    const url = await primary().createDatabase();
    const role = `no_monitor_${process.pid}`;
    await primary().sql(`DROP ROLE IF EXISTS ${role}`);
    await primary().sql(`CREATE ROLE ${role} LOGIN`);
    const database = new URL(url).pathname.slice(1);
    await primary().sql(`GRANT ALL ON DATABASE "${database}" TO ${role}`);
    await primary().sql(`GRANT ALL ON SCHEMA public TO ${role}`, [], url);
    const asRole = new URL(url);
    asRole.username = role;
    const engine = new PostgresEngine({ connectionString: asRole.toString(), durability: "standby" });
    try {
      const refused = await engine.migrate(catalog.layout(), catalog.keysOf).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StartRefusal);
      expect((refused as Error).message).toContain(`GRANT pg_monitor TO "${role}"`);
    } finally {
      await engine.close();
    }
    // Seeing them, but with COMMIT returning before its record is flushed: refused too.
    await primary().sql(`GRANT pg_monitor TO ${role}`);
    await primary().sql(`ALTER ROLE ${role} SET synchronous_commit = off`);
    const unflushed = new PostgresEngine({ connectionString: asRole.toString(), durability: "standby" });
    try {
      const refused = await unflushed
        .migrate(catalog.layout(), catalog.keysOf)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StartRefusal);
      expect((refused as Error).message).toContain(`ALTER ROLE "${role}" SET synchronous_commit = on`);
    } finally {
      await unflushed.close();
    }
    // Both mended, it starts.
    await primary().sql(`ALTER ROLE ${role} RESET synchronous_commit`);
    const granted = new PostgresEngine({ connectionString: asRole.toString(), durability: "standby" });
    try {
      await granted.migrate(catalog.layout(), catalog.keysOf);
    } finally {
      await granted.close();
    }
  }, 60_000);
});
