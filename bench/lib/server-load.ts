/**
 * A load run charged to the server under it: the server process's CPU time per completed request
 * (from `/proc`), which the shared machine's load inflates far less than throughput.
 */
import type { LoadResult } from "./load.ts";
import { processCpuNs } from "./proc.ts";

/** A load run and the server's CPU time per completed request. */
export interface ServerLoad {
  load: LoadResult;
  cpuPerRequestNs: number;
}

/** Runs `run` against the server process `pid` and charges it the CPU time it used. */
export async function withServerCpu(pid: number, run: () => Promise<LoadResult>): Promise<ServerLoad> {
  const cpu0 = processCpuNs(pid);
  const load = await run();
  return { load, cpuPerRequestNs: (processCpuNs(pid) - cpu0) / load.completed };
}
