/**
 * `npm run dev [-- ENTRY]`: the development loop. Runs the app's entry (default
 * examples/app/main.ts) under `tsx watch`, which restarts it whenever a file it imports changes
 * (functions, schema, auth config), and `tsc --noEmit --watch` beside it so type errors show in
 * the same terminal. The SQLite file is not touched by a restart: data survives.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";

const require = createRequire(import.meta.url);
const tsxCli = join(dirname(require.resolve("tsx/package.json")), "dist/cli.mjs");
const tscCli = require.resolve("typescript/bin/tsc");

const entry = resolve(process.argv[2] ?? "examples/app/main.ts");

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

const server = spawn(process.execPath, [tsxCli, "watch", "--clear-screen=false", entry], {
  stdio: ["inherit", "pipe", "pipe"],
  env: { LOG_LEVEL: "info", ...process.env },
});
const types = spawn(process.execPath, [tscCli, "--noEmit", "--watch", "--preserveWatchOutput", "--pretty"], {
  stdio: ["ignore", "pipe", "pipe"],
});
pipe(server, "[app]");
pipe(types, "[tsc]");

let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const child of [server, types]) if (child.exitCode === null) child.kill("SIGTERM");
  process.exitCode = code;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop(0));
server.once("exit", (code) => stop(code ?? 0));
types.once("exit", (code) => stop(code ?? 0));
