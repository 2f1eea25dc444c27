/**
 * `run`: `--help` after a function name prints the help and the function's arguments instead of
 * running it (it used to run a third rotation), and private keys reach a terminal only with
 * `--show-secrets` (a pipe, as into `env set JWKS`, still gets the whole value). The terminal is
 * a real pseudo-terminal (util-linux `script`).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { NODE_ARGS, PROCESS_TEST_TIMEOUT, ROOT, runCli } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const databaseUrl = tempDatabaseFile();
const env = { DATABASE_URL: databaseUrl, NODE_ENV: "development" as const };
const cli = (args: string[]) => runCli(args, { env });

/** The CLI with its stdout on a pseudo-terminal: what a person at a terminal sees. */
function cliOnTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, ...NODE_ARGS, join(ROOT, "src/app/cli/bin.ts"), ...args]
    .map(quote)
    .join(" ");
  return new Promise((done, fail) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: "silent", ...env },
      stdio: "pipe",
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.once("error", fail);
    child.once("close", (code: number | null) => done({ code, output }));
    child.stdin.end();
  });
}

const keySet = async () => (await cli(["env", "get", "JWKS"])).stdout;

beforeAll(async () => {
  expect((await cli(["env", "sync", "--auth"])).code).toBe(0);
}, PROCESS_TEST_TIMEOUT);

describe("run FN --help", () => {
  it(
    "prints the function's kind and arguments and the usage, and runs nothing",
    async () => {
      const before = await keySet();
      for (const flag of ["--help", "-h"]) {
        const help = await cli(["run", "auth:rotateKeys", flag]);
        expect(help.code).toBe(0);
        expect(help.stdout).toContain("auth:rotateKeys: internal action");
        expect(help.stdout).toMatch(/overlap\?: boolean \| number/);
        expect(help.stdout).toContain("usage: service-auth run");
      }
      // Also after the arguments.
      expect((await cli(["run", "auth:rotateKeys", '{"overlap":true}', "--help"])).code).toBe(0);
      expect(await keySet()).toBe(before);
      expect((await cli(["run", "--help"])).stdout).toMatch(/^usage: service-auth run/);
    },
    PROCESS_TEST_TIMEOUT,
  );
});

describe("secrets in a value", () => {
  it(
    "are hidden on a terminal, shown with --show-secrets, and whole in a pipe",
    async () => {
      const piped = await cli(["run", "auth:getLatestJwks"]);
      expect(piped.code).toBe(0);
      const [key] = JSON.parse(piped.stdout) as { id: string; privateKey: string }[];
      expect(key.privateKey.length).toBeGreaterThan(100);

      const shown = await cliOnTerminal(["run", "auth:getLatestJwks"]);
      expect(shown.code).toBe(0);
      expect(shown.output).toContain(key.id);
      expect(shown.output).toContain('"privateKey":"[hidden]"');
      expect(shown.output).not.toContain(key.privateKey.slice(0, 40).replaceAll('"', '\\"'));
      expect(shown.output).toContain("--show-secrets prints them");

      const asked = await cliOnTerminal(["run", "--show-secrets", "auth:getLatestJwks"]);
      expect(asked.code).toBe(0);
      expect(asked.output).not.toContain("[hidden]");
      expect(asked.output).toContain(JSON.stringify(key.privateKey).slice(1, 41));
    },
    PROCESS_TEST_TIMEOUT,
  );
});
