/**
 * The one way tests and benchmarks run a long-lived child process (a server): spawn it, wait until
 * its output shows a ready line, keep what it wrote, and stop it with SIGTERM, then SIGKILL if it
 * is still there after a grace period. A process that exits, fails to spawn or stays silent past
 * the timeout rejects with what it wrote (a silent one is SIGKILLed first).
 */
import { type ChildProcess, spawn } from "node:child_process";

/** Where the ready line is looked for. */
export type ReadyStream = "stdout" | "stderr" | "either";

export interface SpawnReadyOptions {
  /** What the process is, for error messages (e.g. "examples/app/main.ts"). */
  name: string;
  /** The executable; default this Node.js (`process.execPath`). */
  command?: string;
  args: string[];
  cwd?: string;
  /** The whole environment of the process. */
  env: NodeJS.ProcessEnv;
  /** Matches the ready line in the output (`readyOn`) written so far. */
  ready: RegExp;
  readyOn?: ReadyStream;
  /** How long the process may take to print its ready line. */
  timeoutMs: number;
  /** Keep only the last this many characters of each stream (long-running benchmark servers). */
  keepChars?: number;
}

export interface StopOptions {
  /** The first signal; default SIGTERM (graceful). */
  signal?: NodeJS.Signals;
  /** How long to wait for the process to go after `signal` before SIGKILL. */
  graceMs?: number;
}

export interface ReadyProcess {
  child: ChildProcess;
  /** The ready line's match (its groups, e.g. a port). */
  match: RegExpExecArray;
  stdout(): string;
  stderr(): string;
  /** Both streams, in the order the chunks arrived. */
  output(): string;
  /** Settles once the process is gone. */
  readonly exited: Promise<void>;
  /** Sends `signal` (SIGTERM), SIGKILL after `graceMs` (default 60 s) if still there; resolves once gone. */
  stop(options?: StopOptions): Promise<void>;
}

/** Default grace after SIGTERM: a graceful shutdown on a loaded two-core machine, with room. */
export const STOP_GRACE_MS = 60_000;

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Resolves true when `child` is gone within `ms`, false otherwise. */
function goneWithin(exited: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((done) => {
    timer = setTimeout(() => done(false), ms);
  });
  return Promise.race([exited.then(() => true), late]).finally(() => clearTimeout(timer));
}

/** Spawns the process and resolves once its output matches `ready`. */
export function spawnReady(options: SpawnReadyOptions): Promise<ReadyProcess> {
  const { name, ready, readyOn = "either", timeoutMs, keepChars } = options;
  const child = spawn(options.command ?? process.execPath, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const text = { stdout: "", stderr: "", output: "" };
  const keep = (s: string) => (keepChars !== undefined && s.length > keepChars ? s.slice(-keepChars) : s);
  // A failed spawn emits "error" and no "exit": it is gone as well.
  const exited = new Promise<void>((done) => {
    child.once("exit", () => done());
    child.once("error", () => done());
  });
  const stop = async ({ signal = "SIGTERM", graceMs = STOP_GRACE_MS }: StopOptions = {}) => {
    if (!running(child) || child.pid === undefined) return exited;
    child.kill(signal);
    if (signal === "SIGKILL" || (await goneWithin(exited, graceMs))) return exited;
    child.kill("SIGKILL");
    return exited;
  };
  return new Promise((done, fail) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const written = () => text.output || "(nothing)";
    const timer = setTimeout(
      () =>
        settle(() => {
          child.kill("SIGKILL");
          fail(new Error(`${name} was not ready within ${timeoutMs} ms; it wrote:\n${written()}`));
        }),
      timeoutMs,
    );
    const onData = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      text[stream] = keep(text[stream] + chunk);
      text.output = keep(text.output + chunk);
      if (settled || (readyOn !== "either" && readyOn !== stream)) return;
      const match = ready.exec(readyOn === "either" ? text.output : text[stream]);
      if (!match) return;
      settle(() =>
        done({
          child,
          match,
          stdout: () => text.stdout,
          stderr: () => text.stderr,
          output: () => text.output,
          exited,
          stop,
        }),
      );
    };
    child.stdout!.on("data", onData("stdout"));
    child.stderr!.on("data", onData("stderr"));
    child.once("error", (error) =>
      settle(() => fail(new Error(`${name} could not start: ${error.message}`))),
    );
    child.once("exit", (code, signal) =>
      settle(() =>
        fail(new Error(`${name} exited (${code ?? signal}) before it was ready; it wrote:\n${written()}`)),
      ),
    );
  });
}
