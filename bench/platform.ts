/**
 * In-process platform costs: `backend.runQuery` of an indexed point read and `backend.runMutation`
 * of a single insert, on a real SQLite file (WAL, synchronous=NORMAL) seeded with 10k documents.
 * Calls run one at a time, so each sample is one call's latency.
 */
import { join } from "node:path";
import { startService } from "service-auth/server";
import { keyFor, modules, SEED_COUNT, schema, seedItems } from "./fixtures/point-app.ts";
import { formatNs, interleave, sampleAsync, summarize } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const ROUNDS = 5;
const QUERIES_PER_ROUND = 10_000;
const MUTATIONS_PER_ROUND = 2_000;

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
