/**
 * `cli run --as <email|userId>`: the function runs as that user through a real session and JWT
 * (steps 1+2), the session is removed afterwards; `--help` lists every command; an unknown
 * function name lists the closest paths.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeMatches, editDistance } from "../../src/backend/functions/close-matches.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runCli } from "../helpers/process.ts";

const APP = join(ROOT, "examples/app/app.ts");

let app: ExampleApp;
let userId: string;
let cli: (args: string[]) => ReturnType<typeof runCli>;

beforeAll(async () => {
  app = await startExampleApp();
  userId = (await app.signUp("cli-user@example.com")).userId;
  cli = (args) =>
    runCli(args, { env: { DATABASE_URL: app.service.databaseFile, SERVICE_APP: APP, SITE_URL: app.url } });
});
afterAll(() => app?.close());

const sessionCount = () =>
  app.backend.read(
    async (db) =>
      (
        await db
          .query("session")
          .withIndex("userId", (q) => q.eq("userId", userId))
          .collect()
      ).length,
  );

describe("cli run --as", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("runs a protected query as the user, by email or by id, and ends its session afterwards", async () => {
    const before = await sessionCount();
    const byEmail = await cli(["run", "--as", "cli-user@example.com", "users:me"]);
    expect(byEmail.code).toBe(0);
    expect(JSON.parse(byEmail.stdout)).toMatchObject({ _id: userId, email: "cli-user@example.com" });
    const byId = await cli(["run", "users:me", "--as", userId]);
    expect(JSON.parse(byId.stdout)).toMatchObject({ _id: userId });
    expect(await sessionCount()).toBe(before);
  });

  it("applies the function's own checks: a non-admin gets FORBIDDEN from admin:users", async () => {
    const res = await cli(["run", "--as", "cli-user@example.com", "admin:users"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("error FORBIDDEN");
    // Without --as, users:me has nobody to be.
    const anonymous = await cli(["run", "users:me"]);
    expect(anonymous.stderr).toContain("error UNAUTHORIZED");
  });

  it("names an unknown user, and an unknown function's closest matches", async () => {
    const nobody = await cli(["run", "--as", "nobody@example.com", "users:me"]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain("No user nobody@example.com");
    const typo = await cli(["run", "users:mee"]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('No function "users:mee"; did you mean users:me');
  });

  it("--help lists every command on stdout", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    for (const command of ["env list", "env get", "env set", "env remove", "env sync", "run [--as"])
      expect(help.stdout).toContain(command);
  });
});

describe("close matches", () => {
  it("ranks by edit distance and leaves out far names", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(closeMatches("mesages:list", ["messages:list", "messages:send", "users:me"])).toEqual([
      "messages:list",
    ]);
    expect(closeMatches("zzz", ["messages:list"])).toEqual([]);
  });
});
