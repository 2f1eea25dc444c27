/** Child processes for tests: the CLI and fixture servers, run with tsx from the repository root. */
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnReady } from "./spawn-ready.ts";

/** Repository root (two levels above this file). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/**
 * `node --import tsx script`: one process (the `tsx` binary forks a second node process, which
 * a SIGKILL of the parent would leave running). The condition makes `service-auth/*` resolve to
 * the TypeScript sources, not to a build in dist/ (docs/decisions.md 18).
 */
export const NODE_ARGS = ["--conditions=service-auth-source", "--import", "tsx"];

/**
 * How long one child process may take to finish or to start listening: a second or two on a quiet
 * machine, many times that on a loaded one.
 */
export const PROCESS_WAIT_MS = 60_000;

/**
 * Timeout of a test that runs child processes (tsx CLI runs, spawned servers): it may run up to
 * about ten of them, ~1–2 s each when quiet and several times that on a loaded two-core machine.
 */
export const PROCESS_TEST_TIMEOUT = 180_000;

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runTsx}; `cwd` defaults to the repository root. */
export interface RunOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  timeoutMs?: number;
  cwd?: string;
}

/** Runs `tsx script ...args` to completion; `stdin` is written and closed. */
export function runTsx(script: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  // Elsewhere than the root, `--import tsx` would be looked up from there: give its file instead.
  const nodeArgs = options.cwd
    ? NODE_ARGS.map((a) => (a === "tsx" ? import.meta.resolve("tsx") : a))
    : NODE_ARGS;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, LOG_LEVEL: "silent", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`tsx ${script} ${args.join(" ")} timed out\nstderr: ${stderr}`));
    }, options.timeoutMs ?? PROCESS_WAIT_MS);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? "");
  });
}

/** Runs the platform CLI (`src/app/cli/bin.ts`, the `service-auth` command). */
export function runCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return runTsx(join(ROOT, "src/app/cli/bin.ts"), args, options);
}

export interface SpawnedServer {
  child: ChildProcess;
  port: number;
  url: string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  /** Sends `signal` (default SIGKILL; SIGKILL follows any other within a minute) and waits until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns a server script that prints `listening <port>` on stdout once it serves, and waits for
 * that line. The script gets `PORT=0` unless `env.PORT` says otherwise.
 */
export async function spawnServer(
  script: string,
  env: Record<string, string | undefined>,
  timeoutMs = PROCESS_WAIT_MS,
): Promise<SpawnedServer> {
  const server = await spawnReady({
    name: `server ${script}`,
    args: [...NODE_ARGS, script],
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "silent", PORT: "0", ...env },
    ready: /listening (\d+)/,
    readyOn: "stdout",
    timeoutMs,
  });
  const port = Number(server.match[1]);
  return {
    child: server.child,
    port,
    url: `http://127.0.0.1:${port}`,
    stderr: server.stderr,
    stdout: server.stdout,
    kill: (signal = "SIGKILL") => server.stop({ signal }),
  };
}
