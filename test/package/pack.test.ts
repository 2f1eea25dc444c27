/**
 * The package as a user installs it: `npm run build`, `npm pack`, `npm install <tarball>` into a
 * fresh project outside the repository, then the JavaScript app of test/package/app run with plain
 * `node` through the `service-auth` bin: sign up over HTTP, get a token, call a protected query.
 *
 * The install skips install scripts and copies this repository's compiled better-sqlite3 addon
 * (the same pinned version, built for the same Node): building it from source takes about two
 * minutes of CPU here. `PACK_TEST_NATIVE_BUILD=1` runs the real install scripts instead.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieJar, freePort } from "../helpers/browser.ts";
import { PROCESS_WAIT_MS, ROOT, type RunResult } from "../helpers/process.ts";

/** Build, pack and install: about 20 s on a quiet machine, many times that on a loaded one. */
const SETUP_TIMEOUT = 360_000;
const NATIVE_BUILD = process.env.PACK_TEST_NATIVE_BUILD === "1";
const ADDON = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";

/** Runs a command to completion; rejects with its output when it fails. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, LOG_LEVEL: "silent", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("error", fail);
    child.once("close", (code) => done({ code, stdout, stderr }));
  });
}

async function succeed(command: string, args: string[], options: { cwd: string }): Promise<RunResult> {
  const result = await run(command, args, options);
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
  return result;
}

let project: string;
let packed: { filename: string; files: { path: string }[] };
const timings: string[] = [];

async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const value = await step();
  timings.push(`${label} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return value;
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "service-auth-pack-"));
  await timed("build", () => succeed("npm", ["run", "build"], { cwd: ROOT }));
  const pack = await timed("pack", () =>
    succeed("npm", ["pack", "--json", "--pack-destination", project], { cwd: ROOT }),
  );
  [packed] = JSON.parse(pack.stdout);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "my-app", private: true, type: "module" }),
  );
  await timed("install", () =>
    succeed(
      "npm",
      [
        "install",
        `./${packed.filename}`,
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        ...(NATIVE_BUILD ? [] : ["--ignore-scripts"]),
      ],
      { cwd: project },
    ),
  );
  if (!NATIVE_BUILD) {
    mkdirSync(join(project, ADDON, ".."), { recursive: true });
    copyFileSync(join(ROOT, ADDON), join(project, ADDON));
  }
  for (const file of ["app.mjs", "main.mjs"])
    copyFileSync(join(ROOT, "test/package/app", file), join(project, file));
  console.info(`pack test: ${timings.join(", ")}`);
}, SETUP_TIMEOUT);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

interface App {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `node node_modules/.bin/service-auth start main.mjs`, ready once it logs `listening on`. */
async function startApp(): Promise<App> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ["node_modules/.bin/service-auth", "start", "main.mjs"], {
    cwd: project,
    env: { ...process.env, LOG_LEVEL: "info", PORT: String(port), SITE_URL: url, NODE_ENV: "development" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`no "listening on" within the wait:\n${output}`)),
      PROCESS_WAIT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes("listening on")) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`the app exited (${code}) before listening:\n${output}`));
    });
  });
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

describe("the packed package", () => {
  it("ships the build and its declarations, not the sources", () => {
    const paths = packed.files.map((f) => f.path);
    expect(paths).toContain("dist/backend/cli/bin.js");
    expect(paths).toContain("dist/backend/server.d.ts");
    expect(paths).toContain("README.md");
    expect(paths.filter((p) => !p.startsWith("dist/") && !["package.json", "README.md"].includes(p))).toEqual(
      [],
    );
    expect(relative(ROOT, project).startsWith("..")).toBe(true);
  });

  it(
    "runs an app with plain node: sign up, token, protected query (401 without the token)",
    async () => {
      const app = await startApp();
      try {
        const jar = new CookieJar();
        const signUp = await fetch(`${app.url}/api/auth/sign-up/email`, {
          method: "POST",
          headers: { origin: app.url, "content-type": "application/json" },
          body: JSON.stringify({ name: "Ann", email: "ann@example.com", password: "correct horse battery" }),
        });
        expect(signUp.status).toBe(200);
        jar.absorb(signUp);
        const { user } = (await signUp.json()) as { user: { id: string } };

        const tokenResponse = await fetch(`${app.url}/api/auth/backend/token`, {
          headers: { cookie: jar.header() },
        });
        expect(tokenResponse.status).toBe(200);
        const { token } = (await tokenResponse.json()) as { token: string };

        const call = (headers: Record<string, string>) =>
          fetch(`${app.url}/api/query`, {
            method: "POST",
            headers: { "content-type": "application/json", ...headers },
            body: JSON.stringify({ path: "users:me", args: {} }),
          });
        const signedIn = await call({ authorization: `Bearer ${token}` });
        expect(signedIn.status).toBe(200);
        expect(await signedIn.json()).toEqual({ status: "success", value: { userId: user.id } });

        const anonymous = await call({});
        expect(anonymous.status).toBe(401);
        expect(await anonymous.json()).toMatchObject({ status: "error", code: "UNAUTHORIZED" });
      } finally {
        await app.stop();
      }
    },
    PROCESS_WAIT_MS * 2,
  );

  it(
    "runs the CLI's commands through the bin on the installed app",
    async () => {
      const bin = ["node_modules/.bin/service-auth"];
      const help = await run(process.execPath, [...bin, "--help"], { cwd: project });
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("service-auth run");
      const appEnv = { SERVICE_APP: "app.mjs" };
      const sync = await run(process.execPath, [...bin, "env", "sync", "--auth"], {
        cwd: project,
        env: appEnv,
      });
      expect(sync.code).toBe(0);
      const env = await run(process.execPath, [...bin, "env", "list"], { cwd: project, env: appEnv });
      expect(env.code).toBe(0);
      expect(env.stdout).toMatch(/^SERVICE_AUTH_SECRET=/m);
      expect(env.stdout).toMatch(/^JWKS=/m);
      const anonymous = await run(process.execPath, [...bin, "run", "users:me"], {
        cwd: project,
        env: appEnv,
      });
      expect(anonymous.code).toBe(1);
      expect(anonymous.stderr).toContain("UNAUTHORIZED");
    },
    PROCESS_WAIT_MS * 2,
  );
});
