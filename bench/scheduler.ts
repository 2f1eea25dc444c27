/**
 * The scheduler, in process on a SQLite file: (1) what a scheduled job costs this process beside
 * the floor, the same insert run as a plain mutation (CPU per job: scheduling write, claim, run
 * with its done mark); (2) the delay between a job's due time and its start while jobs fall due
 * at 100 per second for 10 s.
 */
import { join } from "node:path";
import { startService } from "service-auth/server";
import { modules, schema } from "./fixtures/scheduler-app.ts";
import { formatNs, percentile } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const JOBS = 2_000;
const RATE_PER_SEC = 100;
const RATE_SECONDS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cpuNs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) * 1000;
};

export const scheduler: BenchGroup = {
  title: "Scheduler (SQLite file, in process)",
  async run(ctx) {
    const dir = await ctx.tempDir("bench-scheduler-");
    const service = await startService({
      schema,
      modules,
      port: 0,
      hostname: "127.0.0.1",
      databaseUrl: join(dir, "scheduler.sqlite"),
      scheduler: { maxConcurrent: 20 },
    });
    ctx.defer(() => service.close());
    const { backend } = service;
    const count = async () => ((await backend.runQuery("bench:runs", {})).value as unknown[]).length;

    ctx.log(`direct: ${JOBS} mutations`);
    let cpu = process.cpuUsage();
    for (let i = 0; i < JOBS; i++) await backend.runMutation("bench:direct", { due: 0 });
    const directNs = cpuNs(cpu) / JOBS;

    ctx.log(`scheduled: ${JOBS} jobs due now`);
    const before = await count();
    cpu = process.cpuUsage();
    for (let i = 0; i < JOBS; i += 100)
      await backend.runMutation("bench:schedule", { at: Date.now(), count: 100 });
    while ((await count()) < before + JOBS) await sleep(5);
    const scheduledNs = cpuNs(cpu) / JOBS;

    ctx.log(`due at ${RATE_PER_SEC}/s for ${RATE_SECONDS} s`);
    const firstDue = Date.now() + 200;
    const total = RATE_PER_SEC * RATE_SECONDS;
    // Scheduled ahead, so what is measured is the wait from due to start, not the scheduling.
    for (let i = 0; i < total; i += 50) {
      const jobs = Math.min(50, total - i);
      for (let j = 0; j < jobs; j++)
        await backend.runMutation("bench:schedule", {
          at: firstDue + ((i + j) * 1000) / RATE_PER_SEC,
          count: 1,
        });
    }
    const runs = () => backend.runQuery("bench:runs", {});
    while (((await runs()).value as { due: number }[]).filter((r) => r.due >= firstDue).length < total)
      await sleep(20);
    const delays = ((await runs()).value as { due: number; started: number }[])
      .filter((r) => r.due >= firstDue)
      .map((r) => (r.started - r.due) * 1e6);

    return [
      {
        benchmark: "scheduled job ÷ the same insert as a mutation (CPU per job)",
        result: `${(scheduledNs / directNs).toFixed(2)}×`,
        note: `${formatNs(scheduledNs)} vs ${formatNs(directNs)} per job; ${JOBS} jobs, 20 at once`,
      },
      {
        benchmark: `due → start at ${RATE_PER_SEC} jobs/s`,
        result: formatNs(percentile(delays, 50)),
        p50: formatNs(percentile(delays, 50)),
        p99: formatNs(percentile(delays, 99)),
        note: `${total} jobs over ${RATE_SECONDS} s`,
      },
    ] satisfies BenchRow[];
  },
};
