/**
 * `perf` run over a window the caller ends: started at once, stopped with SIGINT (on which
 * `perf stat` prints its counts and `perf record` finishes its file). Where `perf` is missing or
 * may not attach, {@link PerfRun.stop} says so by its exit code.
 */
import { spawn } from "node:child_process";

export interface PerfRun {
  /** Ends the window; resolves once `perf` exited, with its exit code (-1: it could not start) and stderr. */
  stop(): Promise<{ code: number | null; stderr: string }>;
}

export function startPerf(args: string[]): PerfRun {
  let stderr = "";
  const child = spawn("perf", args, { stdio: ["ignore", "ignore", "pipe"] });
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(-1));
  });
  return {
    async stop() {
      child.kill("SIGINT");
      return { code: await exited, stderr };
    },
  };
}
