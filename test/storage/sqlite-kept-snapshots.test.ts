/**
 * The SQLite read pool keeps a reader's snapshot open between reads (read-pool.ts). These tests
 * hold it to its invariant: a read still sees every commit made before it began, another
 * process's included; a kept snapshot ends when the server is idle, when a read throws, and
 * before each write, so that SQLite can still restart the log (the WAL stays bounded).
 */
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import Database from "@service-auth/better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { CommitProbe } from "../../src/backend/storage/sqlite/commit-probe.ts";
import { v } from "../../src/backend/values/index.ts";
import { startTestBackend } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const schema = defineSchema({ notes: defineTable({ text: v.string(), n: v.number() }) });
const { query, mutation } = functionsFor(schema);
const notes = {
  add: mutation({
    args: { text: v.string(), n: v.number() },
    handler: (ctx, a) => ctx.db.insert("notes", a),
  }),
  get: query({ args: { id: v.string() }, handler: (ctx, { id }) => ctx.db.get(id as never) }),
  failAfterRead: query({
    args: { id: v.string() },
    handler: async (ctx, { id }) => {
      await ctx.db.get(id as never);
      throw new Error("after the read");
    },
  }),
};

const open: BackendRuntime[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

async function start() {
  const backend = await startTestBackend({ schema, modules: { notes } });
  open.push(backend);
  return backend;
}

/**
 * Whether some connection holds a snapshot that uses the log: SQLite can then not truncate it
 * (`busy` = 1). Asked on a connection of its own, which waits for nobody.
 */
function snapshotHeld(file: string): boolean {
  const db = new Database(file, { timeout: 0 });
  try {
    const [row] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
    return row.busy === 1;
  } finally {
    db.close();
  }
}

const betterSqlite = createRequire(import.meta.url).resolve("@service-auth/better-sqlite3");

/** Rewrites a stored document's text from another process, as a CLI run or a `sqlite3` shell could. */
function rewriteElsewhere(file: string, id: string, text: string): void {
  const script = `
    const Database = require(${JSON.stringify(betterSqlite)});
    const db = new Database(process.argv[1]);
    const changed = db.prepare("UPDATE t_notes SET doc = json_set(doc, '$.text', ?) WHERE id = ?").run(process.argv[3], process.argv[2]).changes;
    if (changed !== 1) throw new Error("document not found");
    db.close();`;
  execFileSync(process.execPath, ["-e", script, file, id, text]);
}

describe("SQLite reads between commits share a kept snapshot", () => {
  it("a read sees another process's commit made while the snapshot was kept", async () => {
    const backend = await start();
    const id = (await backend.runMutation("notes:add", { text: "before", n: 1 })).value as string;
    expect((await backend.runQuery("notes:get", { id })).value).toMatchObject({ text: "before" });
    // Synchronous from here to the next read: the idle timer cannot end the snapshot meanwhile.
    expect(snapshotHeld(backend.databaseFile)).toBe(true);
    rewriteElsewhere(backend.databaseFile, id, "after");
    expect((await backend.runQuery("notes:get", { id })).value).toMatchObject({ text: "after" });
  });

  it("the kept snapshot ends once no read comes, and when a read throws", async () => {
    const backend = await start();
    const id = (await backend.runMutation("notes:add", { text: "x", n: 1 })).value as string;
    await backend.runQuery("notes:get", { id });
    expect(snapshotHeld(backend.databaseFile)).toBe(true);
    await eventually(() => expect(snapshotHeld(backend.databaseFile)).toBe(false));

    await backend.runMutation("notes:add", { text: "y", n: 2 });
    await expect(backend.runQuery("notes:failAfterRead", { id })).rejects.toThrow("after the read");
    expect(snapshotHeld(backend.databaseFile)).toBe(false);
  });

  it("reads between writes do not keep SQLite from restarting the log", async () => {
    const backend = await start();
    const wal = `${backend.databaseFile}-wal`;
    let largest = 0;
    // About 3 pages written per insert: without restarts the log would pass 20 MB.
    for (let n = 0; n < 2_000; n++) {
      const id = (await backend.runMutation("notes:add", { text: "z".repeat(500), n })).value as string;
      expect((await backend.runQuery("notes:get", { id })).value).toMatchObject({ n });
      if (n % 100 === 0) largest = Math.max(largest, statSync(wal).size);
    }
    largest = Math.max(largest, statSync(wal).size);
    // SQLite checkpoints at 1,000 pages (4 MB) and then starts the log over.
    expect(largest).toBeLessThan(6 * 1024 * 1024);
  });
});

describe("CommitProbe", () => {
  it("tells a commit by any other connection from none, and a read from neither", () => {
    const file = tempDatabaseFile();
    expect(CommitProbe.open(file)).toBeUndefined(); // no such database yet
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (x)");
    const probe = CommitProbe.open(file);
    if (!probe) throw new Error("no probe of an existing WAL database");
    const mark = probe.mark();
    if (mark === undefined) throw new Error("no mark");
    expect(probe.unchangedSince(mark)).toBe(true);
    db.prepare("SELECT count(*) FROM t").get();
    expect(probe.unchangedSince(mark)).toBe(true);
    db.prepare("INSERT INTO t VALUES (1)").run();
    expect(probe.unchangedSince(mark)).toBe(false);
    const later = probe.mark()!;
    expect(probe.unchangedSince(later)).toBe(true);
    probe.close();
    db.close();
  });
});
