/**
 * A newcomer's first hour, from the packed package: README's "Tutorial: from `init` to a revoked
 * session" run as written in a fresh folder outside the repository. The commands, the app
 * (`app.mjs`) and the curl lines are read from the README's code blocks (readme.ts), so the
 * tutorial and this test cannot drift apart.
 *
 * What differs from typing the tutorial by hand, and why:
 * - the tarball's path replaces `/path/to/…`; npm and npx run with `--prefer-offline --no-audit
 *   --no-fund`, install scripts on as a newcomer's are: nothing may compile (better-sqlite3 ships
 *   its binary and comes under an alias, so no second copy joins it; decision 48);
 * - the app listens on a free port (`PORT`), so `http://localhost:3000` becomes that port;
 * - `cd my-app && npm install && npm start` runs as its three commands, `npm start` in the
 *   background until the app logs `listening on`;
 * - a live query of Ann's (a `BackendClient` from this repository, as the page's is) is open during
 *   step 4, to see it refused;
 * - two caches, each keyed by a hash of what it is made from, under node_modules/.cache: the
 *   tarball (the sources, package.json, the lock file, README), and the installed dependencies (the
 *   lock file and package.json), copied into the app's folder before `npm install` so it only adds
 *   the package (about 4 s instead of 45 s on the loaded two-core machine). `NEWCOMER_NO_CACHE=1`
 *   builds and installs from nothing. `npx` installs the tarball in npm's own cache (`_npx`), which
 *   this test empties of it afterwards.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { BackendClient } from "../../src/client/index.ts";
import { freePort } from "../helpers/browser.ts";
import { watch } from "../helpers/live-client.ts";
import { PROCESS_TEST_TIMEOUT, PROCESS_WAIT_MS, ROOT, type RunResult } from "../helpers/process.ts";
import { eventually } from "../helpers/wait.ts";
import { codeBlocks, readmeSection, shellCommands } from "./readme.ts";

/** Build, pack and install: about 20 s on a quiet machine, many times that on a loaded one. */
const SETUP_TIMEOUT = 360_000;
const NO_CACHE = process.env.NEWCOMER_NO_CACHE === "1";
const DEPENDENCY_CACHE = !NO_CACHE;
const CACHE = join(ROOT, "node_modules/.cache/service-auth-newcomer");
const TARBALL_PLACEHOLDER = "/path/to/service-auth-0.1.0.tgz";

const TUTORIAL = readmeSection("Tutorial: from `init` to a revoked session");
const [setupBlock, appBlock, curlBlock] = codeBlocks(TUTORIAL);

/** The tutorial runs with curl, as a reader would; without it the test says so (CI fails). */
const hasCurl = spawnSync("curl", ["--version"], { stdio: "ignore" }).status === 0;
if (!hasCurl) {
  const problem =
    "curl is not installed: the README tutorial test (test/package/newcomer.test.ts) is skipped";
  if (process.env.CI === "true") throw new Error(`${problem} (CI=true: it must run)`);
  console.warn(`\n*** ${problem} ***\n`);
}

/** The environment of everything run in the folder: a development start on its own SQLite file. */
function folderEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: "development", LOG_LEVEL: "info", ...extra };
  // The repository's test settings must not leak into the newcomer's folder.
  for (const name of ["SERVICE_APP", "DATABASE_URL", "SITE_URL", "AUTH_RATE_LIMIT", "SMTP_URL", "MAIL_FROM"])
    delete env[name];
  return env;
}

/** Runs `bash -c script` in `cwd` to completion. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv = folderEnv()): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.once("error", fail);
    child.once("close", (code) => done({ code, stdout, stderr }));
  });
}

async function succeed(script: string, cwd: string, env: Record<string, string> = {}): Promise<RunResult> {
  const result = await bash(script, cwd, folderEnv(env));
  if (result.code !== 0)
    throw new Error(`${script} failed (${result.code}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** `format`: changes when what is kept from those files changes. */
function hashOf(files: string[], format = ""): string {
  const hash = createHash("sha256").update(format).update("\0");
  for (const file of files.sort())
    hash.update(relative(ROOT, file)).update("\0").update(readFileSync(file)).update("\0");
  return hash.digest("hex").slice(0, 16);
}

const timings: string[] = [];
async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const value = await step();
  timings.push(`${label} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return value;
}

/** Moves a finished cache entry into place, removing the older entries of its kind. */
function keep(staging: string, entry: string): void {
  const kind = basename(entry).replace(/-[0-9a-f]+$/, "-");
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (name.startsWith(kind) && path !== staging) rmSync(path, { recursive: true, force: true });
  }
  renameSync(staging, entry);
}

/** `npm run build && npm pack`, reused while the sources it is made from are unchanged. */
async function tarball(): Promise<{ path: string; files: string[] }> {
  const inputs = [
    ...filesUnder(join(ROOT, "src")),
    ...["package.json", "package-lock.json", "README.md", "tsconfig.json", "tsconfig.build.json"].map((f) =>
      join(ROOT, f),
    ),
  ];
  const dir = join(CACHE, `tarball-${hashOf(inputs)}`);
  const listing = join(dir, "files.json");
  if (!NO_CACHE && existsSync(listing)) {
    timings.push("build and pack: cached");
    return { path: join(dir, "service-auth-0.1.0.tgz"), files: JSON.parse(readFileSync(listing, "utf8")) };
  }
  await timed("build", () => succeed("npm run build", ROOT));
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const pack = await timed("pack", () => succeed(`npm pack --json --pack-destination '${staging}'`, ROOT));
  const [packed] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  expect(packed.filename).toBe("service-auth-0.1.0.tgz");
  writeFileSync(join(staging, "files.json"), JSON.stringify(packed.files.map((f) => f.path)));
  keep(staging, dir);
  return { path: join(dir, packed.filename), files: packed.files.map((f) => f.path) };
}

/** Where the installed dependencies (everything but the package itself) are kept between runs. */
const dependencyCache = () =>
  join(
    CACHE,
    `dependencies-${hashOf([join(ROOT, "package.json"), join(ROOT, "package-lock.json")], "relative bin links")}`,
  );

/** npm's settings for every npm and npx run of the tutorial (see the header). */
const NPM_QUIET = {
  npm_config_prefer_offline: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
};

let folder: string;
let packedFiles: string[];
let server: { url: string; port: number; output(): string; stop(): Promise<void> } | undefined;

/** The tutorial's `npm start`, run in the folder; ready once the app logs `listening on`. */
async function npmStart(startLine: string): Promise<NonNullable<typeof server>> {
  const port = await freePort();
  // Its own process group, so stopping it stops npm and the node process npm started.
  const child: ChildProcess = spawn("bash", ["-c", startLine], {
    cwd: folder,
    env: folderEnv({ PORT: String(port) }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
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
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`npm start exited (${code}) before listening:\n${output}`));
    });
  });
  return {
    url: `http://localhost:${port}`,
    port,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, "SIGTERM");
      await exited;
    },
  };
}

/** Removes what `npx --package TARBALL` installed in npm's cache (`_npx/<hash>`), found by the tarball's path. */
function removeNpxInstall(tarballPath: string): void {
  const cache = spawnSync("npm", ["config", "get", "cache"], {
    encoding: "utf8",
    env: folderEnv(),
  }).stdout.trim();
  const npx = join(cache, "_npx");
  if (!cache || !existsSync(npx)) return;
  for (const name of readdirSync(npx)) {
    const manifest = join(npx, name, "package.json");
    if (existsSync(manifest) && readFileSync(manifest, "utf8").includes(tarballPath))
      rmSync(join(npx, name), { recursive: true, force: true });
  }
}

let tarballPath: string | undefined;
let parent: string | undefined;

beforeAll(async () => {
  if (!hasCurl) return;
  const packed = await tarball();
  packedFiles = packed.files;
  tarballPath = packed.path;
  const [initLine, appLine] = shellCommands(setupBlock.code);
  // Named like an app, not like the package: npm refuses to install a package into its namesake.
  parent = mkdtempSync(join(tmpdir(), "newcomer-"));
  const init = initLine.replaceAll(TARBALL_PLACEHOLDER, `'${packed.path}'`);
  expect(init).toMatch(/^npx .* service-auth init my-app\b/);
  await timed("npx service-auth init", () => succeed(init, parent!, NPM_QUIET));
  removeNpxInstall(packed.path);
  const [cd, install, start] = appLine.split(" && ");
  expect([cd, install, start]).toEqual(["cd my-app", "npm install", "npm start"]);
  folder = join(parent, "my-app");
  const cached = dependencyCache();
  if (DEPENDENCY_CACHE && existsSync(cached))
    cpSync(join(cached, "node_modules"), join(folder, "node_modules"), {
      recursive: true,
      verbatimSymlinks: true,
    });
  await timed("npm install", () => succeed(install, folder, NPM_QUIET));
  if (DEPENDENCY_CACHE && !existsSync(cached)) {
    const staging = `${cached}.partial`;
    rmSync(staging, { recursive: true, force: true });
    cpSync(join(folder, "node_modules"), join(staging, "node_modules"), {
      recursive: true,
      // npm's bin links are relative; resolved, they would point into this (deleted) folder.
      verbatimSymlinks: true,
      filter: (source) =>
        !/node_modules[\\/](service-auth|\.bin[\\/]service-auth|\.package-lock\.json)$/.test(source),
    });
    keep(staging, cached);
  }
  server = await timed("npm start", () => npmStart(start));
  console.info(`newcomer test: ${timings.join(", ")}`);
}, SETUP_TIMEOUT);

afterAll(async () => {
  await server?.stop();
  if (tarballPath) removeNpxInstall(tarballPath);
  if (parent) rmSync(parent, { recursive: true, force: true });
});

/** The JSON a tutorial command printed (without npm's `> script` header lines). */
const json = (text: string) =>
  JSON.parse(
    text
      .split("\n")
      .filter((line) => !line.startsWith("> "))
      .join("\n")
      .trim(),
  );

/** Runs `commands` in one bash (`set -eo pipefail`); each one's output, by its line. */
async function runCommands(commands: string[]): Promise<(pattern: RegExp, nth?: number) => string> {
  const script = commands.map((line, i) => `printf '\\n@@%d\\n' ${i}\n${line}`).join("\n");
  const run = await bash(`set -eo pipefail\n${script}`, folder);
  expect(run.code, run.stderr).toBe(0);
  const outputs: [string, string][] = [];
  for (const [, i, text] of run.stdout.matchAll(/@@(\d+)\n([\s\S]*?)(?=\n@@\d+\n|$)/g))
    outputs.push([commands[Number(i)], text]);
  return (pattern, nth = 0) => {
    const found = outputs.filter(([line]) => pattern.test(line))[nth];
    if (!found) throw new Error(`no tutorial command matching ${pattern}`);
    return found[1];
  };
}

/** The cookies curl stored in `jar` (Netscape format), as a Cookie header. */
function jarCookies(): string {
  return readFileSync(join(folder, "jar"), "utf8")
    .split("\n")
    .map((line) => line.replace(/^#HttpOnly_/, ""))
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => line.split("\t"))
    .map((fields) => `${fields[5]}=${fields[6]}`)
    .join("; ");
}

describe.skipIf(!hasCurl)(
  "README tutorial: from `init` to a revoked session, from the packed tarball",
  () => {
    it("init writes the app.mjs the tutorial shows, whole; the tarball ships the build, not the sources", () => {
      expect(readFileSync(join(folder, "app.mjs"), "utf8")).toBe(appBlock.code);
      expect(appBlock.lang).toBe("js");
      expect(appBlock.code.trimEnd().split("\n").length).toBeLessThanOrEqual(40);
      expect(packedFiles).toContain("dist/app/cli/bin.js");
      expect(packedFiles).toContain("dist/backend/server.d.ts");
      expect(packedFiles).toContain("README.md");
      expect(
        packedFiles.filter((p) => !p.startsWith("dist/") && !["package.json", "README.md"].includes(p)),
      ).toEqual([]);
      expect(relative(ROOT, folder).startsWith("..")).toBe(true);
    });

    it("npm install brings one better-sqlite3, the package's own: no second copy for Better Auth's optional peer", () => {
      const own = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).dependencies;
      const installed = join(folder, "node_modules", "@service-auth", "better-sqlite3", "package.json");
      expect(`npm:better-sqlite3@${JSON.parse(readFileSync(installed, "utf8")).version}`).toBe(
        own["@service-auth/better-sqlite3"],
      );
      expect(existsSync(join(folder, "node_modules", "better-sqlite3"))).toBe(false);
    });

    it(
      "the curl lines run as written: sign-up, token, notes:add and notes:list, run --as, then a revocation refuses the JWT and Ann's live query",
      async () => {
        const app = server!;
        const commands = shellCommands(curlBlock.code).map((line) =>
          line.replace("http://localhost:3000", app.url),
        );
        expect(commands[0]).toBe(`B=${app.url}`);
        const revokeAt = commands.findIndex((line) => line.includes("/api/auth/revoke-sessions"));
        expect(revokeAt).toBeGreaterThan(0);

        // Steps 1–3, then the JWT step 2 kept in $TOKEN.
        const output = await runCommands([...commands.slice(0, revokeAt), `printf '%s' "$TOKEN"`]);
        expect(json(output(/sign-up\/email/)).user).toMatchObject({ name: "Ann", email: "ann@example.com" });
        expect(json(output(/notes:add/))).toMatchObject({ status: "success" });
        const listed = json(output(/Bearer \$TOKEN.*notes:list/));
        expect(listed).toMatchObject({ status: "success" });
        expect(listed.value.map((n: { body: string }) => n.body)).toEqual(["hello"]);
        expect(json(output(/^curl -d .*notes:list/))).toMatchObject({
          status: "error",
          code: "UNAUTHORIZED",
        });
        expect(
          json(output(/run --as ann@example\.com notes:list/)).map((n: { body: string }) => n.body),
        ).toEqual(["hello"]);

        // Ann's live query, as the page runs it: a client whose tokens come from her session cookie.
        const client = new BackendClient(`${app.url.replace(/^http/, "ws")}/api/sync`, {
          WebSocket: WebSocket as any,
        });
        try {
          const authChanges: boolean[] = [];
          client.setAuth(
            async () => {
              const res = await fetch(`${app.url}/api/auth/backend/token`, {
                headers: { cookie: jarCookies() },
              });
              if (res.status === 401 || res.status === 403) return null;
              expect(res.status).toBe(200);
              return ((await res.json()) as { token: string }).token;
            },
            (authenticated) => authChanges.push(authenticated),
          );
          const live = watch(client, "notes:list");
          await eventually(() => {
            expect(live.last()?.map((n: { body: string }) => n.body)).toEqual(["hello"]);
            expect(authChanges.at(-1)).toBe(true);
          });

          // Step 4, with the JWT of step 2 (its shell variable, carried over).
          const token = output(/^printf '%s' "\$TOKEN"$/);
          expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
          const step4 = await runCommands([commands[0], `TOKEN='${token}'`, ...commands.slice(revokeAt)]);
          expect(json(step4(/revoke-sessions/))).toEqual({ status: true });
          expect(json(step4(/Bearer \$TOKEN.*notes:list/))).toMatchObject({
            status: "error",
            code: "UNAUTHORIZED",
          });
          // The live query is refused and the client told it is signed out, without a call of its own.
          await eventually(() => {
            expect(live.errors.map((e) => e.code)).toContain("UNAUTHORIZED");
            expect(authChanges.at(-1)).toBe(false);
          });
        } finally {
          client.close();
        }
      },
      PROCESS_TEST_TIMEOUT,
    );
  },
);
