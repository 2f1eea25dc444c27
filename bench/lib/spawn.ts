/**
 * Starts a benchmark server in its own Node process (with tsx) and waits until it announces its
 * port (test/helpers/spawn-ready.ts). The child side calls {@link announceReady}; stopping sends
 * SIGTERM, then SIGKILL after 5 s.
 */
import { spawnReady } from "../../test/helpers/spawn-ready.ts";

const READY = "BENCH_READY ";
/** The ready line, whole (its JSON ends the line). */
const READY_LINE = /^BENCH_READY (\{.*\})\r?\n/m;

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
  const server = await spawnReady({
    name: entry,
    args: [...profile, "--conditions=service-auth-source", "--import", "tsx", entry],
    env: { ...process.env, LOG_LEVEL: "silent", ...env },
    ready: READY_LINE,
    readyOn: "stdout",
    timeoutMs,
    // A server runs for the whole benchmark: keep only the tail of what it writes.
    keepChars: 4000,
  });
  const { port } = JSON.parse(server.match[1]) as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: server.child.pid!,
    stop: () => server.stop({ graceMs: 5_000 }),
  };
}
