/**
 * SQLite faults injected for real: another process holding the write lock (`BEGIN IMMEDIATE` in a
 * child node process, as a `sqlite3` shell with an open transaction would), and database files
 * that cannot be opened. The event loop must keep running while a mutation waits for the lock.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { functionsFor } from "../../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../../src/backend/schema.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/index.ts";
import { callFunction } from "../../helpers/http.ts";
import { ROOT, runTsx } from "../../helpers/process.ts";
import { startTestService, type TestService } from "../../helpers/service.ts";
import { tempDatabaseFile, tempDir } from "../../helpers/temp.ts";

const schema = defineSchema({ notes: defineTable({ text: v.string() }) });
const schemaWithIndex = defineSchema({ notes: defineTable({ text: v.string() }).index("by_text", ["text"]) });
const { query, mutation } = functionsFor();
const notes = {
  add: mutation({ args: { text: v.string() }, handler: (ctx, { text }) => ctx.db.insert("notes", { text }) }),
  list: query({ args: {}, handler: (ctx) => ctx.db.query("notes").collect() }),
};

/** A child process holding the write lock of `file` until `release()`. */
async function holdWriteLock(file: string): Promise<{ pid: number; release(): Promise<void> }> {
  const script = `
    const Database = require("@service-auth/better-sqlite3");
    const db = new Database(${JSON.stringify(file)});
    db.exec("BEGIN IMMEDIATE");
    process.stdout.write("locked\\n");
    process.stdin.on("data", () => { db.exec("COMMIT"); db.close(); process.exit(0); });
  `;
  const child: ChildProcess = spawn(process.execPath, ["-e", script], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d) => String(d).includes("locked") && resolve());
    child.once("exit", (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return {
    pid: child.pid!,
    release: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.stdin?.write("go\n");
      }),
  };
}

const holders: ChildProcess[] = [];
const services: TestService[] = [];
afterEach(async () => {
  for (const c of holders.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of services.splice(0)) await s.close();
  vi.restoreAllMocks();
});

async function start(file: string, busyTimeoutMs: number, s = schema): Promise<TestService> {
  const engine = new SqliteEngine({ filename: file, busyTimeoutMs });
  const service = await startTestService({ schema: s, modules: { notes }, engine, databaseUrl: file });
  services.push(service);
  return service;
}

/** Settles-flag of a promise, for conditions on "still pending". */
function track<T>(promise: Promise<T>) {
  const state = { settled: false, promise };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

/** Resolves after `n` timer ticks, counting only ticks seen while `pending()` holds. */
function ticksWhile(pending: () => boolean, n: number): Promise<number> {
  return new Promise((resolve) => {
    let seen = 0;
    const timer = setInterval(() => {
      if (!pending()) {
        clearInterval(timer);
        resolve(seen);
      } else if (++seen >= n) {
        clearInterval(timer);
        resolve(seen);
      }
    }, 5);
  });
}

describe("SQLite: a write lock held by another process", () => {
  it("keeps the event loop and reads running while a mutation waits, and the mutation succeeds after release", async () => {
    const file = tempDatabaseFile();
    const service = await start(file, 60_000);
    const lock = await holdWriteLock(file);
    const backend: BackendRuntime = service.backend;
    const mutation = track(backend.runMutation("notes:add", { text: "waited" }));
    // The loop turns (timers fire) and HTTP reads are answered while the mutation is pending.
    expect(await ticksWhile(() => !mutation.settled, 10)).toBe(10);
    const read = await callFunction(service.url, "query", "notes:list");
    expect(read.status).toBe(200);
    expect(mutation.settled).toBe(false);
    await lock.release();
    await mutation.promise;
    const after = await callFunction(service.url, "query", "notes:list");
    expect(after.body.value.map((n: { text: string }) => n.text)).toEqual(["waited"]);
  }, 30_000);

  it("answers 503 DATABASE_BUSY after the configured deadline, then succeeds once the lock is released", async () => {
    const file = tempDatabaseFile();
    const service = await start(file, 200);
    const lock = await holdWriteLock(file);
    const refused = await callFunction(service.url, "mutation", "notes:add", { text: "refused" });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ status: "error", code: "DATABASE_BUSY" });
    await lock.release();
    const accepted = await callFunction(service.url, "mutation", "notes:add", { text: "accepted" });
    expect(accepted.status).toBe(200);
    const list = await callFunction(service.url, "query", "notes:list");
    expect(list.body.value.map((n: { text: string }) => n.text)).toEqual(["accepted"]);
  }, 30_000);

  it("refuses later writes at once while a frozen holder (SIGSTOP) keeps the lock past one wait; reads go on; writes succeed once it lets go", async () => {
    const file = tempDatabaseFile();
    const service = await start(file, 200);
    const lock = await holdWriteLock(file);
    process.kill(lock.pid, "SIGSTOP");
    try {
      const first = await callFunction(service.url, "mutation", "notes:add", { text: "waited" });
      expect(first.body).toMatchObject({ status: "error", code: "DATABASE_BUSY" });
      // Known held now: the next write is refused after one try, before any timer could fire.
      const next = service.backend.engine
        .write(async () => "written")
        .then(
          () => "written",
          (e: { code?: string }) => e.code,
        );
      const waited = new Promise((r) => setImmediate(() => r("still waiting")));
      expect(await Promise.race([next, waited])).toBe("DATABASE_BUSY");
      expect((await callFunction(service.url, "query", "notes:list")).status).toBe(200);
    } finally {
      process.kill(lock.pid, "SIGCONT");
    }
    await lock.release();
    const accepted = await callFunction(service.url, "mutation", "notes:add", { text: "accepted" });
    expect(accepted.status).toBe(200);
    const list = await callFunction(service.url, "query", "notes:list");
    expect(list.body.value.map((n: { text: string }) => n.text)).toEqual(["accepted"]);
  }, 30_000);

  it("starts without the write lock when the layout is unchanged", async () => {
    const file = tempDatabaseFile();
    await (await start(file, 200)).close();
    services.length = 0;
    const lock = await holdWriteLock(file);
    // Would wait for the lock (forever) if migrate took it.
    const service = await start(file, 200);
    expect((await callFunction(service.url, "query", "notes:list")).status).toBe(200);
    await lock.release();
  }, 30_000);

  it("waits at start when the layout changed, logs the locked file once, and starts after release", async () => {
    const file = tempDatabaseFile();
    await (await start(file, 200)).close();
    services.length = 0;
    const lock = await holdWriteLock(file);
    const lines: string[] = [];
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "warn";
    const logged = new Promise<void>((resolve) => {
      vi.spyOn(process.stderr, "write").mockImplementation((chunk: any) => {
        lines.push(String(chunk));
        if (String(chunk).includes("write lock")) resolve();
        return true;
      });
    });
    try {
      const starting = track(start(file, 200, schemaWithIndex));
      await logged;
      expect(starting.settled).toBe(false);
      const waits = lines.filter((l) => l.includes("waiting for the database write lock"));
      expect(waits).toHaveLength(1);
      expect(waits[0]).toContain(file);
      await lock.release();
      const service = await starting.promise;
      expect((await callFunction(service.url, "query", "notes:list")).status).toBe(200);
    } finally {
      process.env.LOG_LEVEL = level;
    }
  }, 30_000);
});

describe("SQLite: a database file that cannot be opened", () => {
  const startApp = (databaseUrl: string) =>
    runTsx(join(ROOT, "src/app/cli/bin.ts"), ["start", join(ROOT, "examples/app")], {
      env: { DATABASE_URL: databaseUrl, PORT: "0", LOG_LEVEL: "warn" },
    });

  it("exits 1 with one line naming the path and the reason when the path is a directory", async () => {
    const dir = tempDir();
    const result = await startApp(dir);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toEqual([`cannot open the database file ${dir}: it is a directory`]);
  }, 60_000);

  it("exits 1 with one line when the parent of the path is a file", async () => {
    const dir = tempDir();
    const parent = join(dir, "not-a-dir");
    writeFileSync(parent, "x");
    const file = join(parent, "db.sqlite");
    const result = await startApp(file);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([
      `cannot open the database file ${file}: ${parent} is not a directory`,
    ]);
    expect(result.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  }, 60_000);

  // Root may write anywhere, so this case needs an unprivileged user.
  it.skipIf(process.getuid?.() === 0)(
    "names a read-only directory",
    async () => {
      const dir = tempDir();
      const sub = join(dir, "ro");
      mkdirSync(sub, { mode: 0o555 });
      const file = join(sub, "db.sqlite");
      const result = await startApp(file);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(
        `cannot open the database file ${file}: the directory ${sub} is not writable (SQLite creates the file and its -wal and -shm files there)`,
      );
    },
    60_000,
  );
});
