/**
 * The commit log's ordering guarantee without a lock (`storage/commit-log/log.ts`): numbers are
 * drawn before commit, so number N may become visible after N+1, yet a follower's cursor never
 * passes a number whose transaction may still commit — so once a reader's snapshot head is at or
 * below the cursor (`syncExternalCommits`), every commit that snapshot sees has been delivered.
 * On a durable server (fsync on), where commits of several instances flush the WAL together and
 * become visible in any order.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { COMMIT_LOG_TABLE } from "../../src/backend/storage/commit-log/log.ts";
import { decodeWrites, encodeWrites } from "../../src/backend/storage/commit-log/payload.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { DURABLE_SETTINGS, postgresBinDir, startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

const schema = defineSchema({ people: defineTable({ name: v.string() }) });
const catalog = new Catalog(schema);

async function engineOn(url: string): Promise<PostgresEngine> {
  const engine = new PostgresEngine({ connectionString: url, maxConnections: 4 });
  await engine.migrate(catalog.layout(), catalog.keysOf);
  return engine;
}

const payloadOf = (id: string) =>
  encodeWrites([
    { table: "people", id, before: null, after: { _id: id, _creationTime: 1, name: id } as never },
  ]);

/** Inserts person `id` through `engine`, logging its write set as the runtime does. */
function insert(engine: PostgresEngine, id: string): Promise<void> {
  const doc = { _id: id, _creationTime: 1, name: id };
  return engine.write(
    (tx) => tx.insert("people", doc, catalog.keysOf("people", doc)),
    () => payloadOf(id),
  );
}

/** Everyone `engine` heard of from other instances, in delivery order. */
function heardBy(engine: PostgresEngine): string[] {
  const heard: string[] = [];
  engine.onExternalCommit((payload) => {
    for (const w of decodeWrites(payload) ?? [{ id: "(unknown)" }]) heard.push(w.id);
  });
  return heard;
}

describe.skipIf(!postgresBinDir)("commit log order without a lock (durable PostgreSQL)", () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await startPostgres([...DURABLE_SETTINGS]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("never moves the cursor past a number whose transaction is still committing, nor stops at a rolled-back one", async () => {
    const url = await server.createDatabase();
    const writer = await engineOn(url);
    const reader = await engineOn(url);
    const held = new pg.Client({ connectionString: url });
    await held.connect();
    try {
      const heard = heardBy(reader);
      // A transaction that drew its number and has not committed yet (as if its COMMIT were slow).
      await held.query("BEGIN");
      await held.query(`INSERT INTO "${COMMIT_LOG_TABLE}" (origin, writes) VALUES ('slow', $1)`, [
        payloadOf("slow"),
      ]);
      await insert(writer, "fast");

      let committed = false;
      let resolvedEarly = false;
      await reader.read(async (tx) => {
        // The snapshot sees "fast" (numbered after "slow"): the reader must wait for "slow".
        expect(await tx.get("people", "fast")).not.toBeNull();
        const synced = Promise.resolve(reader.syncExternalCommits(tx));
        void synced.then(() => {
          if (!committed) resolvedEarly = true;
        });
        // The follower is asking who may still commit a missing number (or, wrongly, went past it).
        await eventually(async () => {
          if (resolvedEarly) return true;
          const [row] = await server.sql(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'service-auth-follower' AND query LIKE '%pg_locks%'",
            [],
            url,
          );
          if (row.n === 0) throw new Error("the follower is not waiting for the missing number yet");
          return true;
        });
        expect(resolvedEarly).toBe(false);
        expect(heard).toEqual([]);
        await held.query("COMMIT");
        committed = true;
        await synced;
        // Delivered in number order, the slow commit included, before the reader was let go.
        expect(heard).toEqual(["slow", "fast"]);
      });

      // A number drawn and rolled back holds the cursor only until its transaction ends.
      await held.query("BEGIN");
      await held.query(`INSERT INTO "${COMMIT_LOG_TABLE}" (origin, writes) VALUES ('undone', $1)`, [
        payloadOf("undone"),
      ]);
      await insert(writer, "after");
      await reader.read(async (tx) => {
        expect(await tx.get("people", "after")).not.toBeNull();
        const synced = Promise.resolve(reader.syncExternalCommits(tx));
        await held.query("ROLLBACK");
        await synced;
        expect(heard).toEqual(["slow", "fast", "after"]);
      });
    } finally {
      await held.end().catch(() => {});
      await writer.close();
      await reader.close();
    }
  }, 120_000);

  it("under concurrent commits from three instances, a snapshot at or below the cursor sees only delivered commits", async () => {
    const url = await server.createDatabase();
    const writers = [await engineOn(url), await engineOn(url), await engineOn(url)];
    const reader = await engineOn(url);
    const heard = heardBy(reader);
    const sampler = new pg.Client({ connectionString: url });
    await sampler.connect();
    try {
      const WRITERS_PER_INSTANCE = 6;
      const COMMITS_PER_WRITER = 25;
      let writing = true;
      const writes = Promise.all(
        writers.flatMap((engine, e) =>
          Array.from({ length: WRITERS_PER_INSTANCE }, async (_, w) => {
            for (let i = 0; i < COMMITS_PER_WRITER; i++) await insert(engine, `p-${e}-${w}-${i}`);
          }),
        ),
      ).finally(() => (writing = false));

      // Evidence that commits became visible out of number order: a number missing below a
      // visible one that shows up later.
      const missingSeen = new Set<number>();
      let filledLater = 0;
      const sampling = (async () => {
        while (writing) {
          const { rows } = await sampler.query(`SELECT seq FROM "${COMMIT_LOG_TABLE}" ORDER BY seq`);
          const seqs = new Set(rows.map((r) => Number(r.seq)));
          for (const s of missingSeen) if (seqs.has(s) && missingSeen.delete(s)) filledLater++;
          const max = Math.max(0, ...seqs);
          for (let s = max - 40; s < max; s++) if (s > 0 && !seqs.has(s)) missingSeen.add(s);
        }
      })();

      let reads = 0;
      const violations: string[] = [];
      while (writing) {
        await reader.read(async (tx) => {
          const rows = await tx.scan({
            table: "people",
            index: "by_creation_time",
            range: {},
            order: "asc",
            limit: 10_000,
          });
          await reader.syncExternalCommits(tx);
          // Once the reader may trust what it delivered, every commit its snapshot sees is among it.
          const delivered = new Set(heard);
          for (const { doc } of rows) if (!delivered.has(doc._id)) violations.push(doc._id);
        });
        reads++;
      }
      await writes;
      await sampling;
      expect(violations).toEqual([]);
      expect(reads).toBeGreaterThan(0);
      // Every commit arrives, exactly once.
      const all = writers.length * WRITERS_PER_INSTANCE * COMMITS_PER_WRITER;
      await eventually(() => {
        if (heard.length < all) throw new Error(`${heard.length} of ${all} delivered`);
        return true;
      });
      expect(new Set(heard).size).toBe(all);
      expect(heard).toHaveLength(all);
      console.info(
        `commit order: ${reads} checked reads, ${filledLater} numbers seen missing below a visible one and committed later`,
      );
    } finally {
      await sampler.end().catch(() => {});
      for (const engine of [...writers, reader]) await engine.close();
    }
  }, 240_000);
});
