/**
 * Another process's CPU time and RSS, read from `/proc/<pid>` (Linux), so a group can charge a
 * server child its own cost per operation: CPU time is what the shared machine's load does not
 * inflate, unlike wall time.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SEC = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time of process `pid` so far, in nanoseconds (clock-tick resolution, 10 ms). */
export function processCpuNs(pid: number): number {
  const { userNs, systemNs } = processCpuSplitNs(pid);
  return userNs + systemNs;
}

/** {@link processCpuNs} as user time (the process's own code) and system time (the kernel's on its behalf). */
export function processCpuSplitNs(pid: number): { userNs: number; systemNs: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  const ns = (ticks: string) => (Number(ticks) / TICKS_PER_SEC) * 1e9;
  return { userNs: ns(fields[11]), systemNs: ns(fields[12]) };
}

/** Resident set size of process `pid`, in bytes. */
export function processRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** Process ids of the direct children of `pid` (a cluster primary's workers), from `/proc/<n>/stat`. */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // ppid is the second field after the command name.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return children;
}
