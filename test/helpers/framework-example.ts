/**
 * A framework example as the tests run it: its production build once per change of its sources
 * (reused while a hash of the example, src/, package.json and the lock file is the same), then
 * its production server on a free port against a backend URL.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { PROCESS_WAIT_MS, ROOT } from "./process.ts";
import { spawnReady } from "./spawn-ready.ts";

export interface FrameworkExample {
  /** The example's folder. */
  dir: string;
  /** The build's output folder in it (the source-hash stamp is kept there). */
  outDir: string;
  /** Entries of the example that are generated, not sources (the output folder among them). */
  notSources: string[];
  /** Arguments of `node` that build the example, run in its folder. */
  build: string[];
}

function sourceFiles(dir: string, skip: Set<string>): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (skip.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path, skip));
    else out.push(path);
  }
  return out;
}

/** A hash of everything the build depends on: the example, the package's sources and manifest, the lock file. */
export function sourceHash(example: FrameworkExample): string {
  const hash = createHash("sha256");
  const files = [
    ...sourceFiles(example.dir, new Set([...example.notSources, "node_modules"])),
    ...sourceFiles(join(ROOT, "src"), new Set()),
    join(ROOT, "package.json"),
    join(ROOT, "package-lock.json"),
    join(ROOT, "compat/frameworks/package-lock.json"),
  ];
  for (const file of files.sort()) {
    hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

/** Builds the example unless the output of the same sources is there; says whether it built. */
export async function buildExample(example: FrameworkExample): Promise<{ built: boolean }> {
  const stamp = join(example.outDir, "service-auth-source-hash");
  const hash = sourceHash(example);
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === hash) return { built: false };
  const child = spawn(process.execPath, example.build, {
    cwd: example.dir,
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
  if (code !== 0) throw new Error(`building ${relative(ROOT, example.dir)} failed (${code}):\n${output}`);
  writeFileSync(stamp, hash);
  return { built: true };
}

export interface ExampleServer {
  url: string;
  /** Everything the server wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `node …args` in the example's folder with `env`; resolves once its output matches `ready`.
 * `url` is where browsers reach it.
 */
export async function startExampleServer(
  example: FrameworkExample,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  url: string,
): Promise<ExampleServer> {
  const server = await spawnReady({
    name: args.join(" "),
    args,
    cwd: example.dir,
    env: { ...process.env, NODE_ENV: "production", ...env },
    ready,
    timeoutMs: PROCESS_WAIT_MS,
  });
  return { url, output: server.output, stop: () => server.stop() };
}
