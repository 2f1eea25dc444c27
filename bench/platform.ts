/**
 * In-process platform costs: `backend.runQuery` of an indexed point read and `backend.runMutation`
 * of a single insert, on a real SQLite file (WAL, synchronous=NORMAL) seeded with 10k documents.
 * Calls run one at a time, so each sample is one call's latency. Then single-insert throughput
 * with 50 concurrent writers (and one), and the bound of what group commit could save on SQLite.
 */
import { join } from "node:path";
import Database from "@service-auth/better-sqlite3";
import { startService } from "service-auth/server";
import { keyFor, modules, SEED_COUNT, schema, seedItems } from "./fixtures/point-app.ts";
import { formatCount, formatNs, interleave, median, sampleAsync, summarize } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const ROUNDS = 5;
const QUERIES_PER_ROUND = 10_000;
const MUTATIONS_PER_ROUND = 2_000;
const WRITERS = 50;
const GROUP = 50;

/** Throughput of one run: wall-clock rate and CPU time of this process per operation. */
interface Rate {
  perSec: number;
  cpuNsPerOp: number;
}

/** Runs `total` calls of `op` from `writers` concurrent callers (each awaits its own call). */
async function concurrentRate(writers: number, total: number, op: () => Promise<unknown>): Promise<Rate> {
  let left = total;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (left-- > 0) await op();
    }),
  );
  const wallSec = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { perSec: total / wallSec, cpuNsPerOp: ((cpu.user + cpu.system) * 1_000) / total };
}

/**
 * The most group commit could save on SQLite itself: the same insert (document, id, one index)
 * committed one per transaction vs {@link GROUP} per transaction, each in its own savepoint (as a
 * group must isolate a failing mutation), on a raw better-sqlite3 connection with the platform's
 * settings. CPU per row, so other processes' load on a shared machine does not count.
 */
function groupCommitBound(dir: string, rounds: number): { single: number[]; grouped: number[] } {
  const db = new Database(join(dir, "raw.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, doc TEXT NOT NULL, k BLOB); CREATE INDEX t_k ON t (k)");
  const insert = db.prepare("INSERT INTO t VALUES (?, ?, ?)");
  const [begin, commit] = [db.prepare("BEGIN IMMEDIATE"), db.prepare("COMMIT")];
  const [savepoint, release] = [db.prepare("SAVEPOINT m"), db.prepare("RELEASE m")];
  let n = 0;
  const row = () => {
    n++;
    const key = `new-${n}`;
    insert.run(`id${n}`, JSON.stringify({ key, value: n, label: `item ${key}` }), Buffer.from(key));
  };
  const run = (group: number) => {
    const rows = 10_000;
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < rows; i += group) {
      begin.run();
      for (let j = 0; j < group; j++) {
        if (group === 1) row();
        else {
          savepoint.run();
          row();
          release.run();
        }
      }
      commit.run();
    }
    const cpu = process.cpuUsage(cpu0);
    return ((cpu.user + cpu.system) * 1_000) / rows;
  };
  run(1);
  run(GROUP);
  const out = { single: [] as number[], grouped: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    out.single.push(run(1));
    out.grouped.push(run(GROUP));
  }
  db.close();
  return out;
}

export const platform: BenchGroup = {
  title: "In-process function calls (runQuery / runMutation)",
  async run(ctx) {
    const dir = await ctx.tempDir("bench-platform-");
    const service = await startService({
      schema,
      modules,
      databaseUrl: join(dir, "bench.sqlite"),
      port: 0,
      hostname: "127.0.0.1",
    });
    ctx.defer(() => service.close());
    const { backend } = service;
    ctx.log(`seeding ${SEED_COUNT} items`);
    await seedItems(backend);

    // Keys spread over the table so reads are not all the same row.
    let q = 0;
    const pointRead = async () => {
      const key = keyFor((q++ * 7919) % SEED_COUNT);
      const { value } = await backend.runQuery("items:byKey", { key });
      if (!value) throw new Error(`point read of ${key} found nothing`);
    };
    let m = 0;
    const insert = () => backend.runMutation("items:insert", { key: `new-${m++}`, value: m });
    const noop = () => backend.runQuery("items:noop", {});

    ctx.log("warming up");
    await sampleAsync(5_000, pointRead);
    await sampleAsync(1_000, insert);
    await sampleAsync(5_000, noop);

    ctx.log(`measuring ${ROUNDS} interleaved rounds`);
    const perRound = await interleave(ROUNDS, {
      read: () => sampleAsync(QUERIES_PER_ROUND, pointRead),
      insert: () => sampleAsync(MUTATIONS_PER_ROUND, insert),
      noop: () => sampleAsync(QUERIES_PER_ROUND, noop),
    });
    ctx.log(`${WRITERS} concurrent writers vs one, ${ROUNDS} interleaved rounds`);
    const rates = await interleave(ROUNDS, {
      concurrent: () => concurrentRate(WRITERS, MUTATIONS_PER_ROUND * 2, insert),
      serial: () => concurrentRate(1, MUTATIONS_PER_ROUND * 2, insert),
    });
    ctx.log("group commit bound on raw SQLite");
    const bound = groupCommitBound(dir, ROUNDS);
    const saved = median(bound.grouped.map((g, i) => 1 - g / bound.single[i]));

    const read = summarize(perRound.read.flat());
    const write = summarize(perRound.insert.flat());
    const empty = summarize(perRound.noop.flat());

    const rows: BenchRow[] = [
      {
        benchmark: "runQuery: indexed point read (withIndex + unique)",
        result: `${formatNs(read.p50)} median`,
        p50: formatNs(read.p50),
        p99: formatNs(read.p99),
        goal: "median < 20 µs",
        ok: read.p50 < 20_000,
        note: `${read.n} calls, 10k docs`,
      },
      {
        benchmark: "runMutation: single insert (one transaction)",
        result: `${formatNs(write.p50)} median`,
        p50: formatNs(write.p50),
        p99: formatNs(write.p99),
        goal: "median < 100 µs",
        ok: write.p50 < 100_000,
        note: `${write.n} calls, WAL, synchronous=NORMAL`,
      },
      {
        benchmark: `runMutation: single insert, ${WRITERS} concurrent writers`,
        result: `${formatCount(median(rates.concurrent.map((r) => r.perSec)))} mutations/s`,
        note: `${formatNs(median(rates.concurrent.map((r) => r.cpuNsPerOp)))} CPU per mutation; one writer at a time: ${formatCount(median(rates.serial.map((r) => r.perSec)))}/s, ${formatNs(median(rates.serial.map((r) => r.cpuNsPerOp)))} CPU (SQLite has one writer: concurrency queues)`,
      },
      {
        benchmark: `group commit bound: raw SQLite insert, ${GROUP} per transaction vs 1`,
        result: `${(saved * 100).toFixed(0)}% less CPU per insert`,
        note: `${formatNs(median(bound.single))} vs ${formatNs(median(bound.grouped))} CPU per row (savepoint each); the most group commit could save, before its own costs`,
      },
      {
        benchmark: "runQuery: query that reads nothing (runtime overhead)",
        result: `${formatNs(empty.p50)} median`,
        p50: formatNs(empty.p50),
        p99: formatNs(empty.p99),
        note: `${empty.n} calls; reference for the point read`,
      },
    ];
    return rows;
  },
};
