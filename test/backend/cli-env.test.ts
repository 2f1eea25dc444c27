import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEnvFile } from "../../src/backend/env/store.ts";
import { modules } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { callFunction } from "../helpers/http.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runCli } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const APP = join(ROOT, "test/fixtures/app.ts");

/** A running service and the CLI pointed at the same database file. */
let service: TestService;
let cli: (args: string[], stdin?: string) => ReturnType<typeof runCli>;
beforeAll(async () => {
  service = await startTestService({ schema, modules });
  cli = (args, stdin) =>
    runCli(args, { stdin, env: { DATABASE_URL: service.databaseFile, SERVICE_APP: APP } });
});
afterAll(() => service.close());

describe("CLI env", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("set, get, list and remove; the running service sees each change", async () => {
    const set = await cli(["env", "set", "ZED_VAR", "last"]);
    expect(set).toMatchObject({ code: 0, stdout: "" });
    expect(set.stderr).toContain("ZED_VAR");
    await eventually(() => expect(service.backend.env.get("ZED_VAR")).toBe("last"));

    // Without a value, `env set` reads it from stdin (one trailing newline dropped).
    expect((await cli(["env", "set", "ALPHA"], "line one\nline two\n")).code).toBe(0);
    const get = await cli(["env", "get", "ALPHA"]);
    expect(get).toMatchObject({ code: 0, stdout: "line one\nline two\n" });
    await eventually(() => expect(service.backend.env.get("ALPHA")).toBe("line one\nline two"));

    // Overwrite keeps one row; list is sorted by name.
    expect((await cli(["env", "set", "ZED_VAR", "changed"])).code).toBe(0);
    const list = await cli(["env", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe("ALPHA=line one\nline two\nZED_VAR=changed\n");
    await eventually(() => expect(service.backend.env.get("ZED_VAR")).toBe("changed"));

    const removed = await cli(["env", "remove", "ZED_VAR"]);
    expect(removed.code).toBe(0);
    await eventually(() => expect(service.backend.env.get("ZED_VAR")).toBe(undefined));
    const missing = await cli(["env", "get", "ZED_VAR"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain("ZED_VAR is not set");
  });

  it("sync loads a dotenv file", async () => {
    const file = join(tempDir(), ".env.test");
    writeFileSync(file, "# comment\nexport SYNC_A=1\nSYNC_B=\"two words\"\nSYNC_C='raw'\n\nSYNC_D=a=b\n");
    const r = await cli(["env", "sync", file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("synced 4 variable(s)");
    await eventually(() => expect(service.backend.env.get("SYNC_D")).toBe("a=b"));
    expect(service.backend.env.get("SYNC_A")).toBe("1");
    expect(service.backend.env.get("SYNC_B")).toBe("two words");
    expect(service.backend.env.get("SYNC_C")).toBe("raw");

    const bad = await cli(["env", "sync", join(tempDir(), "missing.env")]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/error: .*ENOENT/);
  });

  it("the service's own env writes are stored and the process env overrides stored values", async () => {
    await service.backend.env.set("FROM_SERVER", "s");
    expect((await cli(["env", "get", "FROM_SERVER"])).stdout).toBe("s\n");
    process.env.FROM_SERVER = "override";
    try {
      expect(service.backend.env.get("FROM_SERVER")).toBe("override");
    } finally {
      delete process.env.FROM_SERVER;
    }
    await expect(service.backend.env.set("bad-name", "x")).rejects.toThrow(/Invalid variable name/);
  });

  it("list masks secrets and passwords in URLs; get prints one value in full", async () => {
    const jwks = JSON.stringify([{ privateKey: { kty: "RSA", d: "private-exponent-xyz" } }]);
    await service.backend.env.set("JWKS", jwks);
    await service.backend.env.set("SERVICE_AUTH_SECRET", "s3cret-value-0123456789");
    await service.backend.env.set("SMTP_URL", "smtp://mailer:mail-pw@127.0.0.1:2525");
    await service.backend.env.set("PLAIN_SETTING", "shown");
    const list = await cli(["env", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`JWKS=**** (${jwks.length} characters)\n`);
    expect(list.stdout).toContain("SERVICE_AUTH_SECRET=**** (23 characters)\n");
    expect(list.stdout).toContain("SMTP_URL=smtp://mailer:****@127.0.0.1:2525\n");
    expect(list.stdout).toContain("PLAIN_SETTING=shown\n");
    for (const secret of ["private-exponent-xyz", "s3cret-value", "mail-pw"]) {
      expect(list.stdout).not.toContain(secret);
      expect(list.stderr).not.toContain(secret);
    }
    expect(list.stderr).toMatch(/env get NAME/);
    expect((await cli(["env", "get", "SERVICE_AUTH_SECRET"])).stdout).toBe("s3cret-value-0123456789\n");
    expect((await cli(["env", "get", "JWKS"])).stdout).toBe(`${jwks}\n`);
    for (const name of ["JWKS", "SERVICE_AUTH_SECRET", "SMTP_URL", "PLAIN_SETTING"])
      await service.backend.env.remove(name);
  });

  it("parses dotenv syntax", () => {
    expect(parseEnvFile('A=1\r\n  # x\nexport B = "q\\"uo\\nte"\nC=\n')).toEqual([
      ["A", "1"],
      ["B", 'q"uo\nte'],
      ["C", ""],
    ]);
    expect(() => parseEnvFile("not a line")).toThrow(/Cannot parse/);
  });
});

describe("CLI run", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("prints only the value: strings raw, everything else as JSON", async () => {
    const sent = await cli(["run", "messages:send", '{"body":"from cli","author":"cli"}']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^[a-z2-7]{30}\n$/);
    const id = sent.stdout.trim();

    const listed = await cli(["run", "messages:byAuthor", '{"author":"cli"}']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      { _id: id, _creationTime: expect.any(Number), body: "from cli", author: "cli" },
    ]);

    // The running service sees the CLI's write.
    const viaHttp = await callFunction(service.url, "query", "messages:byAuthor", { author: "cli" });
    expect(viaHttp.body.value.map((m: { _id: string }) => m._id)).toEqual([id]);
  });

  it("runs internal queries, mutations and actions", async () => {
    const [greet, purge, total] = await Promise.all([
      cli(["run", "messages:greet", '{"name":"ops"}']),
      cli(["run", "messages:purge", '{"author":"nobody"}']),
      cli(["run", "tasks:total"]),
    ]);
    expect(greet).toMatchObject({ code: 0, stdout: "hello ops\n" });
    expect(purge).toMatchObject({ code: 0, stdout: "0\n" });
    expect(total.code).toBe(0);
    expect(Number(total.stdout)).toBeGreaterThanOrEqual(0);
  });

  it("exits 1 with the error on stderr and nothing on stdout", async () => {
    const [unknown, badArgs, failing, notJson] = await Promise.all([
      cli(["run", "messages:nope"]),
      cli(["run", "messages:send", '{"body":1}']),
      cli(["run", "messages:sendTwoThenThrow", '{"author":"x"}']),
      cli(["run", "messages:send", "{body"]),
    ]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toContain("FUNCTION_NOT_FOUND");
    expect(badArgs).toMatchObject({ code: 1, stdout: "" });
    expect(badArgs.stderr).toContain("INVALID_ARGUMENTS");
    expect(badArgs.stderr).toContain("args.body");
    expect(failing).toMatchObject({ code: 1, stdout: "" });
    expect(failing.stderr).toContain("changed my mind");
    expect(notJson.code).not.toBe(0);
    expect(notJson.stdout).toBe("");
    // The error and one hint line, not the whole usage.
    expect(notJson.stderr).toBe(
      'args must be JSON, e.g. \'{"email":"a@b.c"}\'\n(service-auth --help lists every command)\n',
    );
  });

  it("without SERVICE_APP, where the repository's example is absent, says how to point it at an app", async () => {
    const res = await runCli(["env", "list"], {
      env: { DATABASE_URL: service.databaseFile, SERVICE_APP: undefined },
      cwd: tempDir(),
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^no app module: SERVICE_APP is not set/);
    expect(res.stderr).toMatch(/SERVICE_APP=app\.mjs npx service-auth <command>/);
    expect(res.stderr).not.toMatch(/Cannot find module|\n\s+at /);
  });
});
