/**
 * A newcomer's first hour, from the packed package: README "Your own app from an empty folder" run
 * as written in a fresh folder outside the repository, then the README's walkthrough against it.
 * The commands and the app (`app.mjs`, a `defineApp` definition) are read from the README's code blocks
 * (readme.ts), so the section and this test cannot drift apart.
 *
 * What differs from typing the section by hand, and why:
 * - the tarball's path replaces `/path/to/…`; the install adds `--prefer-offline --no-audit
 *   --no-fund` (better-sqlite3 ships its binary inside the package: nothing is compiled);
 * - the app listens on a free port (`PORT`), so the walkthrough's `http://localhost:3000` becomes
 *   that port;
 * - two caches, each keyed by a hash of what it is made from, under node_modules/.cache: the
 *   tarball (the sources, package.json, the lock file, README), and the installed dependencies (the
 *   lock file and package.json), copied into the folder before `npm install` so it only adds the
 *   package (about 4 s instead of 45 s on the loaded two-core machine). `NEWCOMER_NO_CACHE=1`
 *   builds and installs from nothing.
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
import { CookieJar, freePort } from "../helpers/browser.ts";
import { PROCESS_TEST_TIMEOUT, PROCESS_WAIT_MS, ROOT, type RunResult } from "../helpers/process.ts";
import { eventually } from "../helpers/wait.ts";
import { codeBlocks, namedFiles, readmeSection, shellCommands } from "./readme.ts";

/** Build, pack and install: about 20 s on a quiet machine, many times that on a loaded one. */
const SETUP_TIMEOUT = 360_000;
const NO_CACHE = process.env.NEWCOMER_NO_CACHE === "1";
const DEPENDENCY_CACHE = !NO_CACHE;
const CACHE = join(ROOT, "node_modules/.cache/service-auth-newcomer");
const TARBALL_PLACEHOLDER = "/path/to/service-auth-0.1.0.tgz";

const OWN_APP = readmeSection("Your own app from an empty folder");
const WALKTHROUGH = readmeSection("Walkthrough: sign up, call a protected function, revoke, rotate keys");
const [setupBlock, , runBlock] = codeBlocks(OWN_APP);
const walkthroughBlock = codeBlocks(WALKTHROUGH)[0];

/** The walkthrough runs with curl, as a reader would; without it the test says so (CI fails). */
const hasCurl = spawnSync("curl", ["--version"], { stdio: "ignore" }).status === 0;
if (!hasCurl) {
  const problem =
    "curl is not installed: the README walkthrough test (test/package/newcomer.test.ts) is skipped";
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

async function succeed(script: string, cwd: string): Promise<RunResult> {
  const result = await bash(script, cwd);
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

let folder: string;
let packedFiles: string[];
let server: { url: string; port: number; output(): string; stop(): Promise<void> } | undefined;

/** The section's `npm start` line, run in the folder; ready once the app logs `listening on`. */
async function npmStart(): Promise<NonNullable<typeof server>> {
  const [startLine] = shellCommands(runBlock.code);
  expect(startLine).toMatch(/^npm start\b/);
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

beforeAll(async () => {
  if (!hasCurl) return;
  const packed = await tarball();
  packedFiles = packed.files;
  // Named like an app, not like the package: npm refuses to install a package into its namesake.
  folder = mkdtempSync(join(tmpdir(), "my-app-"));
  const cached = dependencyCache();
  if (DEPENDENCY_CACHE && existsSync(cached))
    cpSync(join(cached, "node_modules"), join(folder, "node_modules"), {
      recursive: true,
      verbatimSymlinks: true,
    });
  const setup = shellCommands(setupBlock.code).map((line) =>
    line.startsWith("npm install ")
      ? `${line.replace(TARBALL_PLACEHOLDER, `'${packed.path}'`).replace(/\s+#.*$/, "")} --prefer-offline --no-audit --no-fund`
      : line,
  );
  expect(setup.join("\n")).toContain(packed.path);
  await timed("npm init and install", () => succeed(`set -e\n${setup.join("\n")}`, folder));
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
  for (const [name, code] of namedFiles(OWN_APP)) writeFileSync(join(folder, name), code);
  server = await timed("npm start", npmStart);
  console.info(`newcomer test: ${timings.join(", ")}`);
}, SETUP_TIMEOUT);

afterAll(async () => {
  await server?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** The section's own command lines after `npm start`, by what they run. */
function runLine(pattern: RegExp): string {
  const line = shellCommands(runBlock.code).find((l) => pattern.test(l));
  if (!line) throw new Error(`no command matching ${pattern} in the README's own-app section`);
  return line;
}

/** The JSON a walkthrough command printed (without npm's `> script` header lines). */
const json = (text: string) =>
  JSON.parse(
    text
      .split("\n")
      .filter((line) => !line.startsWith("> "))
      .join("\n")
      .trim(),
  );

describe.skipIf(!hasCurl)("README: your own app from an empty folder, from the packed tarball", () => {
  it("the section shows app.mjs alone (no main file), and the tarball ships the build, not the sources", () => {
    expect([...namedFiles(OWN_APP).keys()].sort()).toEqual(["app.mjs"]);
    expect(packedFiles).toContain("dist/app/cli/bin.js");
    expect(packedFiles).toContain("dist/backend/server.d.ts");
    expect(packedFiles).toContain("README.md");
    expect(
      packedFiles.filter((p) => !p.startsWith("dist/") && !["package.json", "README.md"].includes(p)),
    ).toEqual([]);
    expect(relative(ROOT, folder).startsWith("..")).toBe(true);
  });

  it(
    "the section's CLI lines: users:me without a user is UNAUTHORIZED; env sync --auth finds the secrets",
    async () => {
      const anonymous = await bash(runLine(/run users:me/), folder);
      expect(anonymous.code, anonymous.stderr).not.toBe(0);
      expect(anonymous.stderr).toContain("UNAUTHORIZED");
      const sync = await bash(runLine(/env sync --auth/), folder);
      expect(sync.code, sync.stderr).toBe(0);
      // The first start made them: nothing to generate.
      expect(sync.stderr).not.toMatch(/generated (SERVICE_AUTH_SECRET|JWKS)/);
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    "the walkthrough runs as written: sign-up, token, users:me, setRole, sign-out, key rotation",
    async () => {
      const app = server!;
      const commands = shellCommands(walkthroughBlock.code).map((line) =>
        line.replace("http://localhost:3000", app.url),
      );
      expect(commands[0]).toBe(`B=${app.url}`);
      // Step 5 ends the block: the hard cut, then the graceful rotation.
      const rotations = commands.flatMap((line, i) => (line.includes("auth:rotateKeys") ? [i] : []));
      expect(rotations).toEqual([commands.length - 2, commands.length - 1]);
      const [rotation, gracefulRotation] = rotations;

      // Steps 1–4, each command's output after a marker line.
      const script = commands
        .slice(0, rotation)
        .map((line, i) => `printf '\\n@@%d\\n' ${i}\n${line}`)
        .join("\n");
      const run = await bash(`set -eo pipefail\n${script}`, folder);
      expect(run.code, run.stderr).toBe(0);
      const outputs = new Map<string, string>();
      for (const [, i, text] of run.stdout.matchAll(/@@(\d+)\n([\s\S]*?)(?=\n@@\d+\n|$)/g))
        outputs.set(commands[Number(i)], text);
      const output = (pattern: RegExp, nth = 0) => {
        const found = [...outputs.entries()].filter(([line]) => pattern.test(line))[nth];
        if (!found) throw new Error(`no walkthrough command matching ${pattern}`);
        return found[1];
      };

      // 1. Sign-up.
      expect(json(output(/sign-up\/email/)).user).toMatchObject({ name: "Ann", email: "ann@example.com" });
      // 3. The protected function with the token, and without.
      const me = json(output(/Bearer \$TOKEN.*users:me/));
      expect(me).toMatchObject({
        status: "success",
        value: { name: "Ann", email: "ann@example.com", role: "user" },
      });
      expect(json(output(/^curl -d .*users:me/))).toMatchObject({ status: "error", code: "UNAUTHORIZED" });
      // 4. Ann made an administrator, signed out; the same JWT is then refused.
      expect(json(output(/users:setRole/))).toEqual({
        email: "ann@example.com",
        role: "admin",
      });
      expect(json(output(/sign-out/))).toEqual({ success: true });
      expect(json(output(/Bearer \$TOKEN.*users:me/, 1))).toMatchObject({
        status: "error",
        code: "UNAUTHORIZED",
      });

      // 5. Key rotation: a token of a live session, minted before, is refused once the server has
      // the new keys; the same session gets a new token that works, and Ann is an admin now.
      const jar = new CookieJar();
      const signIn = await fetch(`${app.url}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { origin: app.url, "content-type": "application/json" },
        body: JSON.stringify({ email: "ann@example.com", password: "correct horse" }),
      });
      expect(signIn.status).toBe(200);
      jar.absorb(signIn);
      const token = async () => {
        const res = await fetch(`${app.url}/api/auth/backend/token`, { headers: { cookie: jar.header() } });
        expect(res.status).toBe(200);
        return ((await res.json()) as { token: string }).token;
      };
      const query = (bearer: string) =>
        fetch(`${app.url}/api/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${bearer}` },
          body: JSON.stringify({ path: "users:me", args: {} }),
        });
      const before = await token();
      expect((await query(before)).status).toBe(200);
      const rotate = await bash(`set -eo pipefail\n${commands[rotation]}`, folder);
      expect(rotate.code, rotate.stderr).toBe(0);
      expect(rotate.stderr).toContain("set JWKS");
      await eventually(async () => {
        const refused = await query(before);
        expect(refused.status).toBe(401);
        expect(await refused.text()).toMatch(/signature/i);
      });
      const after = await query(await token());
      expect(after.status).toBe(200);
      expect(await after.json()).toMatchObject({ value: { email: "ann@example.com", role: "admin" } });

      // The graceful rotation: once the server has the new key set, new tokens carry the new key,
      // and a token the old key signed just before still answers 200.
      const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[0], "base64url").toString()).kid;
      const old = await token();
      const graceful = await bash(`set -eo pipefail\n${commands[gracefulRotation]}`, folder);
      expect(graceful.code, graceful.stderr).toBe(0);
      await eventually(async () => expect(kidOf(await token())).not.toBe(kidOf(old)));
      expect((await query(old)).status).toBe(200);
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    "run --as (ServiceOptions.runAs) calls a function as the user; / and /admin are the example's (404)",
    async () => {
      const asAnn = await bash("npm run --silent cli -- run --as ann@example.com users:me", folder);
      expect(asAnn.code, asAnn.stderr).toBe(0);
      expect(JSON.parse(asAnn.stdout)).toMatchObject({ email: "ann@example.com", role: "admin" });
      for (const path of ["/", "/admin"]) expect((await fetch(`${server!.url}${path}`)).status).toBe(404);
    },
    PROCESS_TEST_TIMEOUT,
  );
});
