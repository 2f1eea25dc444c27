/**
 * `service-auth dev [APP]` (`npm run dev` here): the development loop. Runs `service-auth start APP` under
 * `tsx watch`, which restarts it whenever a file it imports changes (functions, schema, auth
 * config), and, when the project has a tsconfig.json and TypeScript installed, `tsc --noEmit
 * --watch` beside it so type errors show in the same terminal. The SQLite file is not touched by a
 * restart: data survives.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** Prefixes every line of a child's output so the two streams stay readable side by side. */
function pipe(child: ChildProcess, label: string): void {
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    let rest = "";
    from?.on("data", (chunk: Buffer) => {
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) to.write(`${label} ${line}\n`);
    });
  }
}

/** The project's own TypeScript compiler (not this package's: it is no dependency), if any. */
function projectTsc(projectDir: string): string | undefined {
  if (!existsSync(join(projectDir, "tsconfig.json"))) return undefined;
  try {
    return createRequire(join(projectDir, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    return undefined;
  }
}

/**
 * Node's `--conditions` flags this process runs with, passed on to the app: in this repository
 * they select the package's TypeScript sources (docs/decisions.md 18).
 */
function conditionFlags(): string[] {
  return process.execArgv.filter((flag) => flag.startsWith("--conditions=") || flag.startsWith("-C="));
}

/**
 * Starts the loop for `script` (an absolute path) run with `args` (e.g. the `service-auth`
 * command with `start APP`); it ends with the app or on SIGINT / SIGTERM.
 */
export function dev(script: string, args: string[] = []): void {
  const tsxCli = join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/cli.mjs");
  const server = spawn(
    process.execPath,
    [tsxCli, "watch", "--clear-screen=false", ...conditionFlags(), script, ...args],
    {
      stdio: ["inherit", "pipe", "pipe"],
      // The app's stderr is this pipe, not the terminal: readable lines when the terminal is ours.
      env: { LOG_LEVEL: "info", ...(process.stderr.isTTY ? { LOG_FORMAT: "text" } : {}), ...process.env },
    },
  );
  const children = [server];
  pipe(server, "[app]");
  const tsc = projectTsc(process.cwd());
  if (tsc) {
    // Not "pretty": its colour escapes would show raw after the "[tsc]" prefix.
    const types = spawn(
      process.execPath,
      [tsc, "--noEmit", "--watch", "--preserveWatchOutput", "--pretty", "false"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    children.push(types);
    pipe(types, "[tsc]");
  }

  let stopping = false;
  function stop(code: number, signal: NodeJS.Signals = "SIGTERM"): void {
    if (stopping) return;
    stopping = true;
    // The signal as received: a Ctrl-C (SIGINT) stops the app at once, SIGTERM drains it.
    for (const child of children) if (child.exitCode === null) child.kill(signal);
    process.exitCode = code;
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop(0, signal));
  for (const child of children) child.once("exit", (code) => stop(code ?? 0));
}
