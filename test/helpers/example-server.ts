/**
 * The example app as `npm start` runs it: `examples/app/main.ts` in a child process on a free
 * port, with SITE_URL at 127.0.0.1 and its own DATABASE_URL. main.ts announces itself with a JSON
 * log line `listening on <url>` on stderr, so logs are on (LOG_LEVEL=info) unless told otherwise.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { freePort } from "./example-app.ts";
import { NODE_ARGS, PROCESS_WAIT_MS, ROOT } from "./process.ts";
import { spawnReady } from "./spawn-ready.ts";

export const EXAMPLE_MAIN = join(ROOT, "examples/app/main.ts");

export interface ExampleServer {
  child: ChildProcess;
  url: string;
  port: number;
  stdout(): string;
  stderr(): string;
  /** Stops the process (SIGTERM: graceful; SIGKILL if it has not gone within a minute) and waits until it is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns main.ts (on `env.PORT`, or a free port) and waits for its `listening on` line. Rejects with the output when the process
 * exits first or does not listen within `timeoutMs`.
 */
export async function spawnExampleServer(
  env: Record<string, string | undefined> & { DATABASE_URL: string },
  timeoutMs = PROCESS_WAIT_MS,
): Promise<ExampleServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await spawnReady({
    name: "examples/app/main.ts",
    args: [...NODE_ARGS, EXAMPLE_MAIN],
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: "development",
      LOG_LEVEL: "info",
      // Read as JSON lines below (`"msg":"listening on …"`).
      LOG_FORMAT: "json",
      PORT: String(port),
      SITE_URL: url,
      // Stopped at once by default; the drain's own tests set a delay.
      SHUTDOWN_DELAY_MS: "0",
      ...env,
    },
    ready: /"msg":"listening on /,
    readyOn: "stderr",
    timeoutMs,
  });
  return {
    child: server.child,
    url,
    port,
    stdout: server.stdout,
    stderr: server.stderr,
    stop: (signal = "SIGTERM") => server.stop({ signal }),
  };
}
