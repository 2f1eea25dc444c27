/**
 * The schema check at start (issue 29): the example app with a stored message whose schema then
 * changes `messages.body` from string to number refuses to start, naming the table, the field,
 * the count and the id, on SQLite and on PostgreSQL; `SCHEMA_CHECK=warn` starts with a logged
 * warning; a verified, unchanged schema reads nothing at the next start.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import app from "../../examples/app/schema.ts";
import { checkStoredDocuments } from "../../src/backend/evolution/stored-check.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { SchemaCheckRefusal, schemaCheckSetting } from "../../src/backend/server.ts";
import { v } from "../../src/backend/values/validators.ts";
import { freePort, startExampleApp } from "../helpers/example-app.ts";
import { SERVICE_AUTH_BIN, START_EXAMPLE, spawnExampleServer } from "../helpers/example-server.ts";
import { setupLogCapture } from "../helpers/log-capture.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runCli, runTsx } from "../helpers/process.ts";
import { startTestBackend } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const capture = setupLogCapture();

/** The example schema with `messages.body` changed from `v.string()` to `v.number()`. */
const bodyIsNumber = defineSchema({
  ...app.tables,
  messages: defineTable({ body: v.number(), author: v.string(), userId: v.id("user") }),
});

/** Starts the example app on `databaseUrl`, signs up and sends "hello"; returns the message id. */
async function storeHello(databaseUrl: string): Promise<string> {
  const first = await startExampleApp({ databaseUrl });
  try {
    const { token } = await first.signUp("ann@example.com");
    const sent = await first.call("mutation", "messages:send", { body: "hello" }, token);
    expect(sent.status).toBe(200);
    return sent.body.value as string;
  } finally {
    await first.close();
  }
}

function schemaChangeScenario(databaseUrl: () => Promise<string>) {
  it("refuses a start whose schema stored documents violate, naming table, field, count and id", async () => {
    const url = await databaseUrl();
    const id = await storeHello(url);

    const refusal = await startExampleApp({ databaseUrl: url, schema: bodyIsNumber }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refusal).toBeInstanceOf(SchemaCheckRefusal);
    const message = (refusal as Error).message;
    expect(message).toContain('1 document of table "messages"');
    expect(message).toContain("messages.body");
    expect(message).toContain("must be number");
    expect(message).toContain(id);
    expect(message).toMatch(/optional.*union.*migrate/s);
    expect(message).toContain("SCHEMA_CHECK=warn");
    expect((refusal as SchemaCheckRefusal).violations).toEqual([
      { table: "messages", path: "messages.body", expected: "number", documents: 1, ids: [id] },
    ]);

    // The escape hatch starts, says so in the log, and the new validator still guards writes.
    process.env.LOG_LEVEL = "warn";
    const logs = capture();
    const warned = await startExampleApp({ databaseUrl: url, schema: bodyIsNumber, schemaCheck: "warn" });
    try {
      expect(logs.join("")).toContain("SCHEMA_CHECK=warn: starting although stored documents");
      expect(logs.join("")).toContain("messages.body");
      const { token } = await warned.signUp("bob@example.com");
      const sent = await warned.call("mutation", "messages:send", { body: "again" }, token);
      expect(sent.status).toBe(400);
      expect(sent.body.code).toBe("SCHEMA_VIOLATION");
    } finally {
      await warned.close();
    }
    // Not remembered as verified: the next start refuses again.
    await expect(startExampleApp({ databaseUrl: url, schema: bodyIsNumber })).rejects.toThrow(
      SchemaCheckRefusal,
    );
    // The unchanged schema still starts.
    const back = await startExampleApp({ databaseUrl: url });
    await back.close();
  });
}

describe("schema check at start (SQLite)", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  schemaChangeScenario(async () => tempDatabaseFile());

  it("`schema check` in the CLI reports the same violation and exits 1; other commands forget a changed table", async () => {
    const file = tempDatabaseFile();
    const id = await storeHello(file);
    const env = {
      DATABASE_URL: file,
      SERVICE_APP: join(ROOT, "test/fixtures/evolution/example-body-number.ts"),
    };
    // A CLI command run with the changed schema (it may write under it) forgets `messages`'
    // verification, so the next start with the verified schema reads that table again.
    const listed = await runCli(["env", "list"], { env });
    expect(listed.code).toBe(0);
    const after = await startTestBackend({ schema: app, modules: {}, filename: file });
    try {
      expect((await checkStoredDocuments(after, { record: false })).checked).toEqual(["messages"]);
    } finally {
      await after.close();
    }
    const result = await runCli(["schema", "check"], { env });
    expect(result.stderr).toContain("schema check:");
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '1 document of table "messages" do not match messages.body: it must be number',
    );
    expect(result.stdout).toContain(id);
    // The example app as it is: every table valid, exit 0.
    const ok = await runCli(["schema", "check", "--all"], { env: { DATABASE_URL: file } });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("stored documents match the schema");
  });

  it("`npm start` (service-auth start examples/app) refuses with the message alone; SCHEMA_CHECK=warn starts", async () => {
    const file = tempDatabaseFile();
    const id = await storeHello(file);
    // A start under the number schema (let through by SCHEMA_CHECK=warn) makes the body a
    // number, which the example's own `v.string()` then refuses.
    const other = await startExampleApp({ databaseUrl: file, schema: bodyIsNumber, schemaCheck: "warn" });
    try {
      await other.backend.write((db) => db.patch(id, { body: 42 }));
    } finally {
      await other.close();
    }
    const port = await freePort();
    const refused = await runTsx(SERVICE_AUTH_BIN, START_EXAMPLE, {
      env: {
        DATABASE_URL: file,
        PORT: String(port),
        SITE_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: "info",
      },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `refusing to start: stored documents do not match the schema:\n  1 document of table "messages" do not match messages.body: it must be string (e.g. ${id})`,
    );
    expect(refused.stderr).not.toMatch(/listening on|\n\s+at /);

    const warned = await spawnExampleServer({ DATABASE_URL: file, SCHEMA_CHECK: "warn" });
    try {
      expect(warned.stderr()).toContain("SCHEMA_CHECK=warn: starting although stored documents");
    } finally {
      await warned.stop();
    }
  });

  it("remembers what it verified: an unchanged schema reads no table, a changed one only itself", async () => {
    const schema = defineSchema({
      a: defineTable({ n: v.number() }),
      b: defineTable({ s: v.string() }),
    });
    const backend = await startTestBackend({ schema, modules: {} });
    try {
      await backend.write(async (db) => {
        for (let i = 0; i < 7; i++) await db.insert("a", { n: i });
        await db.insert("b", { s: "x" });
      });
      const first = await checkStoredDocuments(backend, { batchSize: 2 });
      expect(first.checked).toEqual(expect.arrayContaining(["a", "b"]));
      expect(first.documents).toBe(8);
      expect(first.violations).toEqual([]);
      const again = await checkStoredDocuments(backend);
      expect(again.checked).toEqual([]);
      expect(again.documents).toBe(0);
    } finally {
      await backend.close();
    }
    // Field `n` narrowed to a literal: only `a` is read again, in batches of 2, and every
    // violating document counted (ids: a few).
    const narrowed = defineSchema({
      a: defineTable({ n: v.union(v.literal(0), v.literal(1)) }),
      b: defineTable({ s: v.string() }),
    });
    const reopened = await startTestBackend({
      schema: narrowed,
      modules: {},
      filename: backend.databaseFile,
    });
    try {
      const report = await checkStoredDocuments(reopened, { batchSize: 2 });
      expect(report.checked).toEqual(["a"]);
      expect(report.documents).toBe(7);
      expect(report.violations).toHaveLength(1);
      expect(report.violations[0]).toMatchObject({
        table: "a",
        path: "a.n",
        documents: 5,
        expected: "0 | 1",
      });
      expect(report.violations[0].ids).toHaveLength(3);
    } finally {
      await reopened.close();
    }
    // Found invalid, `a`'s verification is forgotten: even the schema verified before reads it
    // again (documents written meanwhile, by an older server say, were never checked against it).
    const restored = await startTestBackend({ schema, modules: {}, filename: backend.databaseFile });
    try {
      expect((await checkStoredDocuments(restored)).checked).toEqual(["a"]);
    } finally {
      await restored.close();
    }
  });
});

describe.skipIf(!postgresBinDir)(
  "schema check at start (PostgreSQL)",
  { timeout: PROCESS_TEST_TIMEOUT },
  () => {
    const server = usePostgres();
    schemaChangeScenario(() => server().createDatabase());
  },
);

describe("the SCHEMA_CHECK setting", () => {
  it("is refuse when unset, takes warn, and refuses anything else with its message", () => {
    expect(schemaCheckSetting({})).toBe("refuse");
    expect(schemaCheckSetting({ SCHEMA_CHECK: " warn " })).toBe("warn");
    expect(schemaCheckSetting({ SCHEMA_CHECK: "refuse" })).toBe("refuse");
    expect(() => schemaCheckSetting({ SCHEMA_CHECK: "off" })).toThrow(
      'SCHEMA_CHECK="off": must be "refuse" or "warn"',
    );
  });
});
