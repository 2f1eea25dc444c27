/**
 * Where servers' CPU goes, by module of ours (issue 48): `perf record` samples the servers' threads
 * on CPU (not wall time: a thread waiting is not sampled, unlike V8's `--cpu-prof`), and each
 * sample of a main thread is charged to the deepest frame of ours on its stack (a file under
 * `src/` or `bench/`), so a module's figure includes the `pg`, Node and kernel work it called.
 * Samples with no frame of ours are charged to what they are: V8's worker threads (scavenges,
 * concurrent marking, compiling), the garbage collector on the main thread, the event loop (libuv
 * and the kernel, no JavaScript), `pg` or Node code called from nowhere of ours (socket reads,
 * parsing answers).
 *
 * JavaScript frames need names: the servers run with `--perf-basic-prof` (their `NODE_OPTIONS`,
 * {@link PERF_NODE_OPTIONS}), which writes `/tmp/perf-<pid>.map`, and with interpreted functions
 * as frames of their own. Where `perf` cannot record (not installed, not permitted),
 * {@link profileCpuByModule} gives undefined.
 */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startPerf } from "./perf-run.ts";

const run = promisify(execFile);

/** What servers to be profiled must run with (JIT frames named in `/tmp/perf-<pid>.map`). */
export const PERF_NODE_OPTIONS = "--perf-basic-prof --interpreted-frames-native-stack";

/** Removes the symbol map a server run with {@link PERF_NODE_OPTIONS} wrote (once it stopped). */
export const removePerfMap = (pid: number) => rm(`/tmp/perf-${pid}.map`, { force: true });

/** Samples per second per thread. */
const FREQUENCY = 999;

/** CPU time by what it was charged to, in ns, over the profiled window. */
export type CpuByModule = Map<string, number>;

const OURS = /JS:\S*\s(?:file:\/\/)?\/\S*?\/((?:src|bench)\/[^:\s]+?\.ts):/;

/** The label a main-thread sample is charged to, from its frames (leaf first). */
function labelOf(frames: string[]): string {
  for (const frame of frames) {
    if (frame.includes("node_modules")) continue;
    const ours = OURS.exec(frame);
    if (ours) return ours[1];
  }
  if (frames.slice(0, 8).some((f) => /Scavenge|MarkCompact|Heap::|Sweeper/.test(f)))
    return "(garbage collector, main thread)";
  if (!frames.some((f) => f.includes("JS:"))) return "(event loop: libuv and the kernel, no JavaScript)";
  if (frames.some((f) => f.includes("node_modules/pg"))) return "(pg, called from nothing of ours)";
  return "(Node, called from nothing of ours)";
}

/** Charges each sample of `perf script -F comm,ip,sym` output. */
export function chargeSamples(script: string, nsPerSample: number): CpuByModule {
  const out: CpuByModule = new Map();
  const add = (label: string) => out.set(label, (out.get(label) ?? 0) + nsPerSample);
  let comm: string | undefined;
  let frames: string[] = [];
  const flush = () => {
    if (comm === undefined) return;
    add(
      comm === "node-MainThread" || comm === "node" ? labelOf(frames) : "(V8 worker threads: GC, compiling)",
    );
    comm = undefined;
    frames = [];
  };
  for (const line of script.split("\n")) {
    if (!line.trim()) flush();
    else if (line.startsWith("\t")) {
      // A frame: its address, then its symbol.
      const frame = line.trim();
      const space = frame.indexOf(" ");
      frames.push(space < 0 ? "" : frame.slice(space + 1));
    } else {
      // A sample's header: its thread's name (right-aligned).
      flush();
      comm = line.trim().split(/\s+/)[0];
    }
  }
  flush();
  return out;
}

/**
 * Starts sampling `pids` (all their threads); `stop()` ends it and charges the samples. Undefined
 * from `stop()` when `perf` could not record.
 */
export function profileCpuByModule(pids: number[]): { stop(): Promise<CpuByModule | undefined> } {
  const dir = mkdtempSync(join(tmpdir(), "bench-perf-"));
  const file = join(dir, "perf.data");
  const perf = startPerf(["record", "-q", "-F", String(FREQUENCY), "-g", "-p", pids.join(","), "-o", file]);
  return {
    async stop() {
      try {
        const { code } = await perf.stop();
        if (code !== 0 && code !== null) return undefined;
        const { stdout } = await run("perf", ["script", "-i", file, "-F", "comm,ip,sym"], {
          maxBuffer: 1 << 30,
        });
        return chargeSamples(stdout, 1e9 / FREQUENCY);
      } catch {
        return undefined;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
