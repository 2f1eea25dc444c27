/**
 * Online migrations (issue 29): a widen-migrate-narrow change end to end, a migration SIGKILLed in
 * the middle of a batch that resumes and migrates every document exactly once, and a live query
 * (a real WebSocket client) that shows the documents a migration in another process changes.
 * The migrations run as the CLI does, `service-auth migrate NAME`, in a child process.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defineMigration } from "../../src/backend/evolution/migration.ts";
import {
  dryRunMigration,
  migrationProgress,
  runMigration,
} from "../../src/backend/evolution/migration-runner.ts";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { SchemaCheckRefusal } from "../../src/backend/server.ts";
import { openEngine } from "../../src/backend/storage/open.ts";
import { appFor, type Phase, schemaFor } from "../fixtures/evolution/app.ts";
import { closeClients, liveClient, watch } from "../helpers/live-client.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { NODE_ARGS, PROCESS_TEST_TIMEOUT, PROCESS_WAIT_MS, ROOT, runCli } from "../helpers/process.ts";
import { startTestBackend, startTestService } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const FIXTURE = join(ROOT, "test/fixtures/evolution/app.ts");
const CLI = join(ROOT, "src/app/cli/bin.ts");

afterEach(() => closeClients());

const cliEnv = (file: string, phase: Phase, extra: Record<string, string> = {}) => ({
  DATABASE_URL: file,
  SERVICE_APP: FIXTURE,
  EVOLUTION_PHASE: phase,
  ...extra,
});

/** Stores `n` items (`item-0000` …) in the `old` schema; returns the database file. */
async function seed(n: number): Promise<string> {
  const backend = await startTestBackend({ schema: schemaFor("old"), modules: {} });
  try {
    for (let start = 0; start < n; start += 200) {
      await backend.write(async (db) => {
        for (let i = start; i < Math.min(n, start + 200); i++)
          await db.insert("items", { title: `item-${String(i).padStart(4, "0")}` });
      });
    }
  } finally {
    await backend.close();
  }
  return backend.databaseFile;
}

async function itemsIn(file: string, phase: Phase): Promise<Record<string, any>[]> {
  const backend = await startTestBackend({ schema: schemaFor(phase), modules: {}, filename: file });
  try {
    return await backend.read((db) => db.query("items").collect());
  } finally {
    await backend.close();
  }
}

describe("online migrations", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("widen, migrate, narrow: the narrowed schema starts only once every document is migrated", async () => {
    const file = await seed(25);
    // Narrowing at once is refused: 25 documents lack the now required `slug`.
    const refused = await startTestService({ ...appFor("narrow"), databaseUrl: file }).catch((e) => e);
    expect(refused).toBeInstanceOf(SchemaCheckRefusal);
    expect(refused.message).toMatch(
      /25 documents of table "items" do not match items\.slug: it must be string/,
    );

    // Widen: `slug` optional; new code writes it already.
    const wide = await startTestService({ ...appFor("wide"), databaseUrl: file });
    try {
      await wide.backend.runMutation("items:add", { title: "Fresh One" });
    } finally {
      await wide.close();
    }
    const dry = await runCli(["migrate", "addSlug", "--dry-run"], { env: cliEnv(file, "wide") });
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dryRun: true,
      documents: 26,
      wouldChange: 25,
      invalidAfter: 0,
    });
    const reader = await startTestBackend({ schema: schemaFor("wide"), modules: {}, filename: file });
    try {
      expect(await migrationProgress(reader, "addSlug")).toBeNull();
    } finally {
      await reader.close();
    }

    // Migrate in batches of 10: three transactions for 26 documents.
    const run = await runCli(["migrate", "addSlug", "--batch", "10"], { env: cliEnv(file, "wide") });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "done", processed: 26, changed: 25, batches: 3 });
    expect(run.stderr).toContain("addSlug: 10 documents processed");

    // Narrow: the check reads `items` again and finds every document valid.
    const narrow = await startTestService({ ...appFor("narrow"), databaseUrl: file });
    try {
      const items = (await narrow.backend.runQuery("items:list", {})).value as any[];
      expect(items).toHaveLength(26);
      expect(items[0]).toMatchObject({ title: "item-0000", slug: "item-0000" });
      expect(items[25]).toMatchObject({ title: "Fresh One", slug: "fresh-one" });
    } finally {
      await narrow.close();
    }
    // Running it again changes nothing.
    const again = await runCli(["migrate", "addSlug"], { env: cliEnv(file, "narrow") });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "already-done", changed: 25 });
    const listed = await runCli(["migrate"], { env: cliEnv(file, "narrow") });
    expect(listed.stdout).toMatch(/addSlug\titems\tdone\t26 processed, 25 changed/);
    expect(listed.stdout).toMatch(/countVisits\titems\tnot run/);
  });

  it("a migration SIGKILLed inside a batch resumes after the last committed batch: each document once", async () => {
    const total = 600;
    const file = await seed(total);
    const marker = join(tempDir(), "hung");
    // Batches of 50; the document at position 317 never finishes, inside the seventh batch.
    const child = spawn(process.execPath, [...NODE_ARGS, CLI, "migrate", "countVisits", "--batch", "50"], {
      cwd: ROOT,
      env: {
        ...process.env,
        LOG_LEVEL: "silent",
        ...cliEnv(file, "wide", { HANG_AT_TITLE: "item-0317", HANG_MARKER: marker }),
      },
      stdio: "ignore",
    });
    const exited = new Promise<NodeJS.Signals | number | null>((r) =>
      child.once("exit", (code, signal) => r(signal ?? code)),
    );
    try {
      await eventually(() => expect(existsSync(marker)).toBe(true), PROCESS_WAIT_MS);
    } finally {
      child.kill("SIGKILL");
    }
    expect(await exited).toBe("SIGKILL");

    // Six batches committed, the seventh rolled back with the process.
    const half = await itemsIn(file, "wide");
    expect(half.filter((d) => d.visits === 1)).toHaveLength(300);
    expect(half.filter((d) => d.visits === undefined)).toHaveLength(300);
    expect(half.slice(0, 300).every((d) => d.visits === 1)).toBe(true);

    const resumed = await runCli(["migrate", "countVisits", "--batch", "50"], { env: cliEnv(file, "wide") });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain("resumed after 300 documents");
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "done", processed: total, changed: total });
    const all = await itemsIn(file, "wide");
    expect(all).toHaveLength(total);
    expect(all.filter((d) => d.visits !== 1).map((d) => [d.title, d.visits])).toEqual([]);
  });

  it("a patch the schema refuses stops the run at its batch, naming the document and field", async () => {
    const file = await seed(12);
    const backend = await startTestBackend({ schema: schemaFor("wide"), modules: {}, filename: file });
    try {
      const bad = defineMigration<{ _id: string; _creationTime: number; title: string; slug?: string }>({
        table: "items",
        migrateOne: (doc) => (doc.title === "item-0007" ? ({ slug: 7 } as never) : { slug: doc.title }),
      });
      const dry = await dryRunMigration(backend, "bad", bad, { batchSize: 5 });
      expect(dry).toMatchObject({ documents: 12, wouldChange: 12, invalidAfter: 1 });
      expect(dry.firstInvalid).toMatch(/^items\.slug must be string \(document \w+\)$/);
      const error = await runMigration(backend, "bad", bad, { batchSize: 5 }).catch((e) => e);
      expect(error.code).toBe("SCHEMA_VIOLATION");
      expect(error.message).toContain("items.slug");
      // The first batch (0–4) committed; the second, holding item-0007, left no trace.
      expect(await migrationProgress(backend, "bad")).toMatchObject({ processed: 5, changed: 5 });
      const items = await backend.read((db) => db.query("items").collect());
      expect(items.map((d) => d.slug !== undefined)).toEqual([
        ...Array(5).fill(true),
        ...Array(7).fill(false),
      ]);
    } finally {
      await backend.close();
    }
  });

  it("a live query shows the documents a migration in another process changes", async () => {
    const file = await seed(30);
    const service = await startTestService({ ...appFor("wide"), databaseUrl: file });
    try {
      const { client } = liveClient(service.url);
      const items = watch(client, "items:list");
      await eventually(() => expect(items.last()).toHaveLength(30));
      expect(items.last().every((d: any) => d.slug === undefined)).toBe(true);

      const run = await runCli(["migrate", "addSlug", "--batch", "5"], { env: cliEnv(file, "wide") });
      expect(run.code).toBe(0);
      await eventually(() =>
        expect(items.last().map((d: any) => d.slug)).toEqual(
          Array.from({ length: 30 }, (_, i) => `item-${String(i).padStart(4, "0")}`),
        ),
      );
      expect(items.errors).toEqual([]);
    } finally {
      await service.close();
    }
  });
});

describe.skipIf(!postgresBinDir)("online migrations (PostgreSQL)", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  const server = usePostgres();

  it("migrates each document once while the service writes, and its live query follows", async () => {
    const url = await server().createDatabase();
    const seeding = new BackendRuntime({ schema: schemaFor("old"), modules: {}, engine: openEngine(url) });
    await seeding.start();
    try {
      await seeding.write(async (db) => {
        for (let i = 0; i < 120; i++)
          await db.insert("items", { title: `item-${String(i).padStart(4, "0")}` });
      });
    } finally {
      await seeding.close();
    }
    const service = await startTestService({ ...appFor("wide"), databaseUrl: url });
    try {
      const { client } = liveClient(service.url);
      const items = watch(client, "items:list");
      await eventually(() => expect(items.last()).toHaveLength(120));

      // Writes keep coming while the migration runs in another process (conflicts get retried).
      let writing = true;
      let added = 0;
      const writer = (async () => {
        // From the first committed batch on, at most 100 inserts (the test's size stays bounded).
        await eventually(async () => {
          if (writing) expect(await migrationProgress(service.backend, "countVisits")).not.toBeNull();
        }, PROCESS_WAIT_MS);
        while (writing && added < 100) {
          await service.backend.runMutation("items:add", { title: `new ${added}` });
          added++;
        }
      })();
      const run = await runCli(["migrate", "countVisits", "--batch", "10"], {
        env: { DATABASE_URL: url, SERVICE_APP: FIXTURE, EVOLUTION_PHASE: "wide" },
      }).finally(() => {
        writing = false;
      });
      await writer;
      expect(run.code).toBe(0);
      const result = JSON.parse(run.stdout);
      expect(result).toMatchObject({ status: "done" });

      const all = (await service.backend.runQuery("items:list", {})).value as any[];
      expect(all).toHaveLength(120 + added);
      // Every seeded document exactly once; those added during the run at most once.
      expect(all.slice(0, 120).filter((d) => d.visits !== 1)).toEqual([]);
      expect(all.filter((d) => d.visits !== undefined && d.visits !== 1)).toEqual([]);
      expect(all.filter((d) => d.visits === 1)).toHaveLength(result.processed);
      await eventually(() =>
        expect(
          items
            .last()
            .slice(0, 120)
            .every((d: any) => d.visits === 1),
        ).toBe(true),
      );
    } finally {
      await service.close();
    }
  });
});
