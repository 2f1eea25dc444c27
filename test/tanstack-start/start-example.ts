/**
 * The TanStack Start example (examples/tanstack-start) as the tests run it: `vite build` once
 * per change of its sources (the output is reused while a hash of the example, src/ and the lock
 * file is the same), then `node serve.js` on a free port against a backend URL.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../helpers/process.ts";

export const EXAMPLE_DIR = join(ROOT, "examples/tanstack-start");
const VITE_BIN = join(ROOT, "node_modules/vite/bin/vite.js");
/** The build output, and the stamp saying which sources it was built from. */
const BUILD_DIR = join(EXAMPLE_DIR, "dist");
const STAMP = join(BUILD_DIR, "service-auth-source-hash");
/** The build output, not sources (`src/routeTree.gen.ts` is generated but committed). */
const NOT_SOURCES = new Set(["dist", "node_modules"]);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (NOT_SOURCES.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else out.push(path);
  }
  return out;
}

/** A hash of everything the build depends on: the example, the package's sources, the lock file. */
export function sourceHash(): string {
  const hash = createHash("sha256");
  const files = [
    ...sourceFiles(EXAMPLE_DIR),
    ...sourceFiles(join(ROOT, "src")),
    join(ROOT, "package.json"),
    join(ROOT, "package-lock.json"),
  ];
  for (const file of files.sort()) {
    hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

/** Runs `vite build` unless the output of the same sources is there; says whether it built. */
export async function buildExample(): Promise<{ built: boolean }> {
  const hash = sourceHash();
  if (existsSync(STAMP) && readFileSync(STAMP, "utf8") === hash) return { built: false };
  const child = spawn(process.execPath, [VITE_BIN, "build"], {
    cwd: EXAMPLE_DIR,
    env: { ...process.env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const code = await new Promise<number | null>((done, fail) => {
    child.once("error", fail);
    child.once("exit", (c) => done(c));
  });
  if (code !== 0) throw new Error(`vite build failed (${code}):\n${output}`);
  writeFileSync(STAMP, hash);
  return { built: true };
}

export interface StartServer {
  url: string;
  /** Everything the server wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `node serve.js` on 127.0.0.1:`port` with the backend at `backendUrl` (`SERVICE_AUTH_URL`); resolves
 * once the server listens.
 */
export function startExample(port: number, backendUrl: string): Promise<StartServer> {
  const url = `http://localhost:${port}`;
  const child: ChildProcess = spawn(process.execPath, [join(EXAMPLE_DIR, "serve.js")], {
    cwd: EXAMPLE_DIR,
    env: {
      ...process.env,
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PORT: String(port),
      ORIGIN: url,
      SERVICE_AUTH_URL: backendUrl,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((done, fail) => {
    const onData = (d: Buffer) => {
      output += d;
      if (/Listening on/.test(output)) done({ url, output: () => output, stop });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("error", fail);
    child.once("exit", (code, signal) =>
      fail(new Error(`node serve.js exited (${code ?? signal}):\n${output}`)),
    );
  });
}
