/**
 * Starts a benchmark server in its own Node process (with tsx) and waits until it announces its
 * port. The child side calls {@link announceReady}; stopping sends SIGTERM, then SIGKILL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

const READY = "BENCH_READY ";

export interface SpawnedServer {
  /** Base URL, always on 127.0.0.1. */
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Child side: tells the parent the server listens on `port` (one line on stdout). */
export function announceReady(port: number): void {
  process.stdout.write(`${READY}${JSON.stringify({ port })}\n`);
}

/** Child side: runs `close` on SIGTERM/SIGINT, then exits. */
export function exitOnSignal(close: () => Promise<void>): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      void close()
        .catch(() => {})
        .finally(() => process.exit(0));
    });
  }
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Spawns `node --import tsx <entry>` (`service-auth/*` from the sources: docs/decisions.md 18) with `env` added to the environment (logs silenced unless
 * the caller sets LOG_LEVEL) and resolves once it printed its ready line. With `BENCH_CPU_PROF=<dir>`
 * the child writes a V8 CPU profile into `<dir>` when it stops (open it in Chrome DevTools).
 */
export async function spawnServer(
  entry: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<SpawnedServer> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, "--conditions=service-auth-source", "--import", "tsx", entry],
    {
      env: { ...process.env, LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${entry} did not become ready in ${timeoutMs} ms\n${stderr}`)),
      timeoutMs,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (!line.startsWith(READY)) return;
      clearTimeout(timer);
      resolve((JSON.parse(line.slice(READY.length)) as { port: number }).port);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited before ready (code ${code}, signal ${signal})\n${stderr}`));
    });
  });
  child.stdout!.resume();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid!,
    stop: async () => {
      child.kill("SIGTERM");
      if (!(await waitExit(child, 5_000))) {
        child.kill("SIGKILL");
        await waitExit(child, 5_000);
      }
    },
  };
}
