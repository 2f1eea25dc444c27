/**
 * Schema evolution (issue 29): an index added to a table of 1,000,000 documents, built online
 * (`src/backend/storage/indexes/build.ts`) on SQLite and on PostgreSQL while a writer inserts one
 * document per transaction, one after another, the whole time.
 *
 * Per engine: how long `migrate` holds the start (SQLite creates the partial index there), the
 * time to build, and the longest time the concurrent writer waited from one commit to its next
 * (its stall, batches it waited behind included; goal < 1 s), with the p50/p99 of those times. Afterwards the index is checked: a count through it equals the
 * table's. The documents are stored with the drivers directly (the engine's own write path would
 * take minutes for a million); everything measured goes through the engine. The load average is
 * printed with the figures: a busy machine makes them worse, not better.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import Database from "@service-auth/better-sqlite3";
import pg from "pg";
import { Catalog } from "../src/backend/db/catalog.ts";
import { defineSchema, defineTable } from "../src/backend/schema.ts";
import type { StorageEngine, StoredDocument } from "../src/backend/storage/engine.ts";
import { PostgresEngine } from "../src/backend/storage/postgres/engine.ts";
import { SqliteEngine } from "../src/backend/storage/sqlite/engine.ts";
import { v } from "../src/backend/values/index.ts";
import { startBenchPostgres } from "./lib/postgres-db.ts";
import { formatCount } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

/** `BENCH_SCHEMA_DOCUMENTS` overrides the million (a quick check that the group runs). */
const DOCUMENTS = Number(process.env.BENCH_SCHEMA_DOCUMENTS) || 1_000_000;
const CHUNK = 10_000;
const STALL_GOAL_MS = 1000;

const fields = { author: v.string(), body: v.string(), n: v.number() };
const before = new Catalog(defineSchema({ messages: defineTable(fields) }));
const after = new Catalog(
  defineSchema({ messages: defineTable(fields).index("by_author", ["author", "n"]) }),
);

function message(i: number): StoredDocument {
  return {
    _id: `m${String(i).padStart(10, "0")}`,
    _creationTime: 1.7e12 + i,
    author: `user${(i * 7919) % 10_000}`,
    body: `message number ${i} of the benchmark`,
    n: i,
  };
}

/** Stores the million documents in chunks straight through the driver: ids, JSON and creation keys. */
async function fill(insertChunk: (rows: [string, string, Buffer][]) => Promise<void>): Promise<void> {
  for (let start = 0; start < DOCUMENTS; start += CHUNK) {
    const rows: [string, string, Buffer][] = [];
    for (let i = start; i < Math.min(DOCUMENTS, start + CHUNK); i++) {
      const doc = message(i);
      rows.push([doc._id, JSON.stringify(doc), before.keysOf("messages", doc).by_creation_time]);
    }
    await insertChunk(rows);
  }
}

const ms = (n: number) => `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" / ");

/** Builds `by_author` with a writer running beside it; returns the rows of `engine`'s kind. */
async function measure(ctx: BenchContext, label: string, engine: StorageEngine): Promise<BenchRow[]> {
  const loadBefore = load();
  ctx.log(`${label}: migrating to the schema with the new index (load ${loadBefore})`);
  const t0 = performance.now();
  await engine.migrate(after.layout(), after.keysOf);
  const migrateMs = performance.now() - t0;
  const building = engine.buildingIndexes().length > 0;

  /** Time from one write's commit to the next one's: what the writer waited, batches included. */
  const latencies: number[] = [];
  let writing = true;
  const writer = (async () => {
    let last = performance.now();
    for (let i = DOCUMENTS; writing; i++) {
      const doc = message(i);
      await engine.write(async (tx) => tx.insert("messages", doc, after.keysOf("messages", doc)));
      const now = performance.now();
      latencies.push(now - last);
      last = now;
      // As writes arriving over the network would: the event loop turns between them.
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  await engine.indexesBuilt();
  const buildMs = performance.now() - t0;
  writing = false;
  await writer;
  const loadAfter = load();
  ctx.log(`${label}: built in ${ms(buildMs)}, ${latencies.length} writes meanwhile (load ${loadAfter})`);

  const total = await engine.read((tx) => tx.count("messages", "by_creation_time", {}));
  const indexed = await engine.read((tx) => tx.count("messages", "by_author", {}));
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const stall = sorted[sorted.length - 1] ?? 0;
  const note = `load average (1/5/15 min) ${loadBefore} before, ${loadAfter} after; machine shared with other work`;
  return [
    {
      benchmark: `${label}: migrate to the new index (start delay)`,
      result: ms(migrateMs),
      goal: `< ${STALL_GOAL_MS} ms`,
      ok: migrateMs < STALL_GOAL_MS && building,
      note: building ? "registers the online build" : "no online build was registered (unexpected)",
    },
    {
      benchmark: `${label}: build index on ${formatCount(DOCUMENTS)} documents`,
      result: `${(buildMs / 1000).toFixed(1)} s`,
      ok: indexed === total,
      note: `count through the index ${formatCount(indexed)} = table ${formatCount(total)}: ${indexed === total}; ${note}`,
    },
    {
      benchmark: `${label}: longest write stall during the build`,
      result: ms(stall),
      p50: ms(at(0.5)),
      p99: ms(at(0.99)),
      goal: `< ${STALL_GOAL_MS} ms`,
      ok: stall < STALL_GOAL_MS,
      note: `${formatCount(latencies.length)} single-insert transactions, one after another; result, p50, p99: time between two commits`,
    },
  ];
}

export const schema: BenchGroup = {
  title: `Schema evolution: an index added to ${formatCount(DOCUMENTS)} documents, built online`,
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];

    const filename = join(await ctx.tempDir("bench-schema-"), "schema.sqlite");
    const seeded = new SqliteEngine({ filename });
    await seeded.migrate(before.layout(), before.keysOf);
    await seeded.close();
    ctx.log(`SQLite: storing ${formatCount(DOCUMENTS)} documents`);
    const db = new Database(filename);
    const insert = db.prepare("INSERT INTO t_messages (id, doc, k_by_creation_time) VALUES (?, ?, ?)");
    await fill(async (chunk) =>
      db.transaction(() => {
        for (const r of chunk) insert.run(r);
      })(),
    );
    db.close();
    const sqlite = new SqliteEngine({ filename });
    try {
      rows.push(...(await measure(ctx, "SQLite", sqlite)));
    } finally {
      await sqlite.close();
    }

    const url = await startBenchPostgres(ctx);
    const seededPg = new PostgresEngine({ connectionString: url });
    await seededPg.migrate(before.layout(), before.keysOf);
    await seededPg.close();
    ctx.log(`PostgreSQL: storing ${formatCount(DOCUMENTS)} documents`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // As an operator's bulk load would: the external-change trigger is the engine's business only.
    await client.query("SET service_auth.engine = '1'");
    await fill(async (chunk) => {
      await client.query(
        "INSERT INTO t_messages (id, doc, k_by_creation_time) SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])",
        [chunk.map((r) => r[0]), chunk.map((r) => r[1]), chunk.map((r) => r[2])],
      );
    });
    await client.query("VACUUM ANALYZE t_messages");
    await client.end();
    const postgres = new PostgresEngine({ connectionString: url });
    try {
      rows.push(...(await measure(ctx, "PostgreSQL", postgres)));
    } finally {
      await postgres.close();
    }
    return rows;
  },
};
