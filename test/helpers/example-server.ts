/**
 * The example app as `npm start` runs it: `service-auth start examples/app` in a child process on
 * a free port, with SITE_URL at 127.0.0.1 and its own DATABASE_URL. The start announces itself
 * with a JSON log line `listening on <url>` on stderr, so logs are on (LOG_LEVEL=info) unless told
 * otherwise.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { freePort } from "./example-app.ts";
import { NODE_ARGS, PROCESS_WAIT_MS, ROOT } from "./process.ts";
import { spawnReady } from "./spawn-ready.ts";

/** The `service-auth` command (the package's bin). */
export const SERVICE_AUTH_BIN = join(ROOT, "src/app/cli/bin.ts");
/** Its arguments for `npm start`: `runTsx(SERVICE_AUTH_BIN, START_EXAMPLE, …)`. */
export const START_EXAMPLE = ["start", join(ROOT, "examples/app")];

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
 * Spawns `service-auth start examples/app` (on `env.PORT`, or a free port) and waits for its
 * `listening on` line. Rejects with the output when the process exits first or does not listen
 * within `timeoutMs`.
 */
export function spawnExampleServer(
  env: Record<string, string | undefined> & { DATABASE_URL: string },
  timeoutMs = PROCESS_WAIT_MS,
): Promise<ExampleServer> {
  return spawnStart(START_EXAMPLE, env, { timeoutMs });
}

/**
 * Spawns `service-auth ARGS` (e.g. `start`, `start DIR`) in `cwd` (default the repository root)
 * as {@link spawnExampleServer} does.
 */
export async function spawnStart(
  args: string[],
  env: Record<string, string | undefined>,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<ExampleServer> {
  const timeoutMs = options.timeoutMs ?? PROCESS_WAIT_MS;
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Outside the root, `--import tsx` would be looked up from there: give its file instead.
  const nodeArgs = options.cwd
    ? NODE_ARGS.map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a))
    : NODE_ARGS;
  const server = await spawnReady({
    name: `service-auth ${args.join(" ")}`,
    args: [...nodeArgs, SERVICE_AUTH_BIN, ...args],
    cwd: options.cwd ?? ROOT,
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
