/**
 * Online index builds on both engines (`index-build.ts`): an index added to a table of a few
 * thousand documents is built in small batches while writes go on, answers exactly like a full
 * scan filtered in memory once ready, refuses queries with `503 INDEX_NOT_READY` until then, and
 * resumes after the building process is SIGKILLed. PostgreSQL runs on a server the test starts.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import Database from "@service-auth/better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { compileRange } from "../../src/backend/db/query.ts";
import { AppError } from "../../src/backend/errors.ts";
import type { StorageEngine, StoredDocument } from "../../src/backend/storage/engine.ts";
import { indexBuildBatch } from "../../src/backend/storage/open.ts";
import { callFunction } from "../helpers/http.ts";
import { inlineFunctions } from "../helpers/inline-functions.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { NODE_ARGS, PROCESS_TEST_TIMEOUT, PROCESS_WAIT_MS, ROOT } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";
import { after, before, openEngine, type Person, person, seed } from "./fixtures/index-build.ts";

const DOCS = 3000;
const BATCH = 50;
const CHILD = join(ROOT, "test/storage/fixtures/index-build-child.ts");

const keyOf = (doc: StoredDocument) => after.keysOf("people", doc).by_name;
const byName = (name: string) =>
  compileRange("by_name", after.table("people").indexes.get("by_name") as string[], [
    { kind: "eq", field: "name", value: name },
  ]);

/** Every document, read by the index every table has. */
const allDocs = (engine: StorageEngine) =>
  engine.read(async (tx) =>
    tx.scan({ table: "people", index: "by_creation_time", range: {}, order: "asc", limit: 1_000_000 }),
  );

/** The built index answers like a full scan filtered and sorted in memory: whole, per name, counted. */
async function expectIndexMatchesScan(engine: StorageEngine): Promise<void> {
  const docs = (await allDocs(engine)).map((r) => r.doc);
  const sorted = [...docs].sort((a, b) => Buffer.compare(keyOf(a), keyOf(b)));
  await engine.read(async (tx) => {
    const asc = await tx.scan({
      table: "people",
      index: "by_name",
      range: {},
      order: "asc",
      limit: 1_000_000,
    });
    expect(asc.map((r) => r.doc)).toEqual(sorted);
    for (const row of asc) expect(row.key.equals(keyOf(row.doc))).toBe(true);
    const desc = await tx.scan({
      table: "people",
      index: "by_name",
      range: {},
      order: "desc",
      limit: 1_000_000,
    });
    expect(desc.map((r) => r.doc._id)).toEqual(sorted.map((d) => d._id).reverse());
    const names = new Set(docs.map((d) => (d as Person).name));
    for (const name of [...names, "nobody"]) {
      const expected = sorted.filter((d) => (d as Person).name === name);
      const got = await tx.scan({
        table: "people",
        index: "by_name",
        range: byName(name),
        order: "asc",
        limit: 10_000,
      });
      expect(got.map((r) => r.doc)).toEqual(expected);
      expect(await tx.count("people", "by_name", byName(name))).toBe(expected.length);
    }
    expect(await tx.count("people", "by_name", {})).toBe(docs.length);
  });
}

/** A query on the index while it is built: refused with the typed error naming it. */
async function expectRefused(engine: StorageEngine): Promise<void> {
  for (const query of [
    () =>
      engine.read(async (tx) =>
        tx.scan({ table: "people", index: "by_name", range: {}, order: "asc", limit: 10 }),
      ),
    () => engine.read((tx) => tx.count("people", "by_name", byName("name1"))),
    () =>
      engine.write(async (tx) =>
        tx.scan({ table: "people", index: "by_name", range: byName("name1"), order: "asc", limit: 1 }),
      ),
  ]) {
    const error = await query().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "INDEX_NOT_READY", status: 503 });
    expect((error as Error).message).toMatch(/Index "by_name" of table "people" is being built/);
  }
}

/** Starts the build in a child process that stops after `pause` batches; resolves with it once paused. */
async function pausedBuilder(target: string, pause: number): Promise<ReturnType<typeof spawn>> {
  const child = spawn(process.execPath, [...NODE_ARGS, CHILD, target, String(BATCH), String(pause)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  try {
    await eventually(() => expect(stdout, stderr).toContain("paused"), PROCESS_WAIT_MS);
  } catch (error) {
    await kill(child);
    throw error;
  }
  return child;
}

/** SIGKILLs `child` and resolves once it is gone. */
function kill(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/**
 * How a test keeps a registered build from going on: SQLite, by holding the file's write lock
 * from another connection; PostgreSQL, by the paused child holding the builders' lock. The
 * returned function lets the build go on (the child is SIGKILLed).
 */
type HoldBuild = (target: string, child: ReturnType<typeof spawn>) => () => Promise<void>;

function onlineBuildSuite(name: string, newTarget: () => Promise<string>, holdBuild: HoldBuild): void {
  describe(`${name}: online index build`, () => {
    const engines: StorageEngine[] = [];
    const children: ReturnType<typeof spawn>[] = [];
    afterEach(async () => {
      for (const c of children.splice(0)) await kill(c);
      for (const e of engines.splice(0)) await e.close();
    });
    const open = (target: string, options: Parameters<typeof openEngine>[1]) => {
      const engine = openEngine(target, options);
      engines.push(engine);
      return engine;
    };

    it(
      "builds while writes go on, refusing queries until ready, then answers like a full scan",
      async () => {
        const target = await newTarget();
        await seed(target, DOCS);
        let batches = 0;
        let paused: (() => void) | undefined;
        let engine!: StorageEngine;
        let next = DOCS;
        /** Writes on both sides of the build's position: the build must neither miss nor undo them. */
        const writeBetweenBatches = () =>
          engine.write(async (tx) => {
            const added = person(next++, `late${batches % 5}`);
            await tx.insert("people", added, after.keysOf("people", added));
            for (const i of [(batches * 97) % DOCS, (batches * 31 + 1500) % DOCS]) {
              const doc = await tx.get("people", person(i)._id);
              if (!doc) continue;
              const changed = { ...doc, name: `moved${batches % 7}` };
              await tx.replace("people", changed, after.keysOf("people", changed));
            }
            await tx.delete("people", person((batches * 53 + 7) % DOCS)._id);
          });
        engine = open(target, {
          batchSize: BATCH,
          afterBatch: async () => {
            batches++;
            await writeBetweenBatches();
            if (batches === 2) await new Promise<void>((resolve) => (paused = resolve));
          },
        });
        await engine.migrate(after.layout(), after.keysOf);
        expect(engine.buildingIndexes()).toEqual([{ table: "people", index: "by_name" }]);

        // A writer of its own, racing the batches rather than running between them.
        let writing = true;
        let raced = 0;
        const writer = (async () => {
          for (let i = 0; writing; i++) {
            await engine.write(async (tx) => {
              const doc = await tx.get("people", person((i * 13) % DOCS)._id);
              if (!doc) return;
              const changed = { ...doc, name: `raced${i % 3}` };
              await tx.replace("people", changed, after.keysOf("people", changed));
            });
            if (engine.buildingIndexes().length) raced++;
            await new Promise((resolve) => setImmediate(resolve));
          }
        })();

        await eventually(() => expect(paused).toBeDefined());
        await expectRefused(engine);
        paused?.();
        await engine.indexesBuilt();
        writing = false;
        await writer;

        expect(engine.buildingIndexes()).toEqual([]);
        expect(batches).toBeGreaterThanOrEqual(DOCS / BATCH);
        expect(raced).toBeGreaterThan(0);
        await expectIndexMatchesScan(engine);
        expect(
          await engine.explainScan({
            table: "people",
            index: "by_name",
            range: byName("name3"),
            order: "asc",
            limit: 5,
          }),
        ).toMatch(/i_people_by_name/);

        // Writes after the build keep the index right too; a restart finds nothing left to build.
        await writeBetweenBatches();
        await expectIndexMatchesScan(engine);
        const reopened = open(target, {});
        await reopened.migrate(after.layout(), after.keysOf);
        expect(reopened.buildingIndexes()).toEqual([]);
        await expectIndexMatchesScan(reopened);
      },
      PROCESS_TEST_TIMEOUT,
    );

    it(
      "resumes a build whose process was SIGKILLed half-way, and completes it correctly",
      async () => {
        const target = await newTarget();
        await seed(target, DOCS);
        await kill(await pausedBuilder(target, 10));

        // Its ten batches stay done: this process resumes after them.
        let batches = 0;
        const engine = open(target, { batchSize: BATCH, afterBatch: () => void batches++ });
        await engine.migrate(after.layout(), after.keysOf);
        await engine.indexesBuilt();
        expect(batches).toBeGreaterThan(0);
        expect(batches).toBeLessThanOrEqual(DOCS / BATCH - 10 + 1);
        expect(engine.buildingIndexes()).toEqual([]);
        await expectIndexMatchesScan(engine);
      },
      PROCESS_TEST_TIMEOUT,
    );

    it(
      "a server starts and serves while a build runs: withIndex on it answers 503 INDEX_NOT_READY until ready",
      async () => {
        const target = await newTarget();
        await seed(target, DOCS);
        const child = await pausedBuilder(target, 3);
        children.push(child);
        const release = holdBuild(target, child);
        let service: TestService | undefined;
        try {
          const inline = inlineFunctions();
          const engine = openEngine(target, { batchSize: BATCH });
          service = await startTestService({
            schema: after.schema,
            modules: { t: inline.module },
            engine,
          });
          const url = service.url;
          const byIndex = inline.register((db) =>
            db
              .query("people")
              .withIndex("by_name", (q: any) => q.eq("name", "name5"))
              .collect(),
          );
          const all = inline.register((db) => db.query("people").collect());
          const refused = await callFunction(url, "query", "t:read", byIndex);
          expect(refused.status).toBe(503);
          expect(refused.body).toMatchObject({
            status: "error",
            code: "INDEX_NOT_READY",
            message: expect.stringMatching(/Index "by_name" of table "people" is being built/),
          });
          const everyone = await callFunction(url, "query", "t:read", all);
          expect(everyone.status).toBe(200);
          expect(everyone.body.value).toHaveLength(DOCS);

          await release();
          await engine.indexesBuilt();
          const answered = await callFunction(url, "query", "t:read", byIndex);
          expect(answered.status).toBe(200);
          expect(answered.body.value).toEqual(everyone.body.value.filter((d: Person) => d.name === "name5"));
          await expectIndexMatchesScan(engine);
        } finally {
          await release();
          await service?.close();
        }
      },
      PROCESS_TEST_TIMEOUT,
    );

    it(
      "forgets an unfinished build when the index leaves the schema, and builds it anew when it returns",
      async () => {
        const target = await newTarget();
        await seed(target, DOCS);
        await kill(await pausedBuilder(target, 10));
        const without = open(target, {});
        await without.migrate(before.layout(), before.keysOf);
        expect(without.buildingIndexes()).toEqual([]);
        await without.indexesBuilt();
        await without.write(async (tx) => {
          const doc = person(5, "renamed");
          await tx.replace("people", doc, before.keysOf("people", doc));
        });

        let batches = 0;
        const again = open(target, { batchSize: BATCH, afterBatch: () => void batches++ });
        await again.migrate(after.layout(), after.keysOf);
        expect(again.buildingIndexes()).toEqual([{ table: "people", index: "by_name" }]);
        await again.indexesBuilt();
        // From the first document again: the position of the forgotten build is not reused.
        expect(batches).toBe(DOCS / BATCH + 1);
        await expectIndexMatchesScan(again);
      },
      PROCESS_TEST_TIMEOUT,
    );

    it("indexes a table of at most one batch at once, inside migrate", async () => {
      const target = await newTarget();
      await seed(target, BATCH);
      let batches = 0;
      const engine = open(target, { batchSize: BATCH, afterBatch: () => void batches++ });
      await engine.migrate(after.layout(), after.keysOf);
      expect(engine.buildingIndexes()).toEqual([]);
      await expectIndexMatchesScan(engine);
      expect(batches).toBe(0);
    });
  });
}

describe("INDEX_BUILD_BATCH", () => {
  it("sets the batch size; anything but a whole number from 1 to 100000 refuses to start", () => {
    expect(indexBuildBatch({})).toBeUndefined();
    expect(indexBuildBatch({ INDEX_BUILD_BATCH: " 250 " })).toBe(250);
    for (const bad of ["0", "-5", "2.5", "lots", "100001"]) {
      expect(() => indexBuildBatch({ INDEX_BUILD_BATCH: bad })).toThrow(
        /INDEX_BUILD_BATCH must be a whole number/,
      );
    }
  });
});

onlineBuildSuite(
  "SQLite",
  async () => tempDatabaseFile(),
  (target, child) => {
    const holder = new Database(target);
    holder.exec("BEGIN IMMEDIATE");
    return async () => {
      await kill(child);
      if (holder.open) holder.close();
    };
  },
);

describe.skipIf(!postgresBinDir)("PostgreSQL", () => {
  const server = usePostgres();
  onlineBuildSuite(
    "PostgreSQL",
    () => server().createDatabase(),
    (_target, child) => () => kill(child),
  );

  it(
    "drops and makes again an index an interrupted CREATE INDEX CONCURRENTLY left invalid",
    async () => {
      const target = await server().createDatabase();
      await seed(target, DOCS);
      await kill(await pausedBuilder(target, 10));
      // What a build killed during CREATE INDEX CONCURRENTLY leaves: the index, marked invalid.
      await server().sql("CREATE INDEX i_people_by_name ON t_people (k_by_name)", [], target);
      await server().sql(
        "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'i_people_by_name'::regclass",
        [],
        target,
      );
      const engine = openEngine(target, { batchSize: BATCH });
      try {
        await engine.migrate(after.layout(), after.keysOf);
        await engine.indexesBuilt();
        const [state] = await server().sql(
          "SELECT indisvalid FROM pg_index WHERE indexrelid = 'i_people_by_name'::regclass",
          [],
          target,
        );
        expect(state).toEqual({ indisvalid: true });
        await expectIndexMatchesScan(engine);
      } finally {
        await engine.close();
      }
    },
    PROCESS_TEST_TIMEOUT,
  );
});
