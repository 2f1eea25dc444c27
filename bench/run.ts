/**
 * `npm run bench [-- group ...]`: runs the selected benchmark groups (all by default) one after
 * another and prints one markdown table of results on stdout; progress goes to stderr.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { groups } from "./groups.ts";
import { markdownTable } from "./lib/table.ts";
import type { BenchContext, BenchRow } from "./lib/types.ts";

process.env.LOG_LEVEL ??= "silent";

const requested = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const unknown = requested.filter((name) => !(name in groups));
if (unknown.length) {
  process.stderr.write(
    `Unknown benchmark group(s): ${unknown.join(", ")}. Available: ${Object.keys(groups).join(", ")}\n`,
  );
  process.exit(2);
}
const selected = requested.length ? requested : Object.keys(groups);

const sections: { group: string; rows: BenchRow[] }[] = [];
let failed = false;
const started = Date.now();

for (const name of selected) {
  const group = groups[name];
  const cleanups: (() => Promise<void> | void)[] = [];
  const dirs: string[] = [];
  const ctx: BenchContext = {
    log: (message) => process.stderr.write(`[${name}] ${message}\n`),
    tempDir: async (prefix) => {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    defer: (cleanup) => {
      cleanups.push(cleanup);
    },
  };
  const t0 = Date.now();
  ctx.log(group.title);
  try {
    sections.push({ group: name, rows: await group.run(ctx) });
  } catch (error) {
    failed = true;
    ctx.log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    sections.push({
      group: name,
      rows: [{ benchmark: "(group failed)", result: String(error).slice(0, 120), ok: false }],
    });
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        ctx.log(`cleanup failed: ${String(error)}`);
      }
    }
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
  ctx.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

const cpu = cpus()[0]?.model ?? "unknown CPU";
// The machine's load when the run ended (1, 5, 15 min): figures from a loaded machine say so.
const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(", ");
process.stdout.write(
  `\nBenchmarks (${new Date().toISOString()}, Node ${process.version}, ${availableParallelism()} × ${cpu}, ${(
    (Date.now() - started) / 1000
  ).toFixed(0)} s, load average ${load})\n\n${markdownTable(sections)}\n`,
);
process.exitCode = failed ? 1 : 0;
