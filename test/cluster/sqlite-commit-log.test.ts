/**
 * The SQLite engine's cluster mode in one process: two engines on one file stand for two workers,
 * joined by an in-memory wake-up bus (the primary's relay in production). What must hold: a
 * commit reaches the other engine with its exact write set; a read snapshot that sees a commit
 * not applied yet makes the engine catch up from the log even when the wake-up never came;
 * writers outside the cluster (the CLI) still count as unknown commits; the log stays bounded;
 * and a single process keeps no log at all.
 */
import Database from "@service-auth/better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { decodeWrites, encodeWrites } from "../../src/backend/storage/commit-log/payload.ts";
import { type CommitWakeups, PRUNE_EVERY } from "../../src/backend/storage/sqlite/commit-log.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const catalog = new Catalog(defineSchema({ items: defineTable({ n: v.number() }) }));

/** Wake-ups between engines of one test; `muted` drops them (a lost message). */
function bus() {
  const listeners = new Set<{ from: object; listener: (seq: number) => void }>();
  const state = { muted: false };
  const member = (): CommitWakeups => {
    const self = {};
    return {
      publish(seq) {
        if (state.muted) return;
        for (const l of listeners) if (l.from !== self) queueMicrotask(() => l.listener(seq));
      },
      subscribe(listener) {
        const entry = { from: self, listener };
        listeners.add(entry);
        return () => listeners.delete(entry);
      },
    };
  };
  return { member, state };
}

const open: SqliteEngine[] = [];
afterEach(async () => {
  for (const e of open.splice(0)) await e.close();
});

async function engine(filename: string, wakeups?: CommitWakeups, keep?: number): Promise<SqliteEngine> {
  const e = new SqliteEngine({
    filename,
    pollIntervalMs: 20,
    ...(wakeups ? { commitLog: { wakeups, keep, pollIntervalMs: 60_000 } } : {}),
  });
  open.push(e);
  await e.migrate(catalog.layout(), catalog.keysOf);
  return e;
}

let n = 0;
/** Inserts one item through `e` the way the runtime does (write set handed to the engine). */
async function insert(e: SqliteEngine): Promise<string> {
  const doc = { _id: `items_${++n}`, _creationTime: Date.now() + n, n };
  await e.write(
    (tx) => tx.insert("items", doc, catalog.keysOf("items", doc)),
    () => encodeWrites([{ table: "items", id: doc._id, before: null, after: doc }]),
  );
  return doc._id;
}

/** Every external commit `e` delivers: the ids written, or "unknown". */
function heard(e: SqliteEngine): (string[] | "unknown")[] {
  const out: (string[] | "unknown")[] = [];
  e.onExternalCommit((payload) => {
    const writes = decodeWrites(payload);
    out.push(writes ? writes.map((w) => w.id) : "unknown");
  });
  return out;
}

describe("SQLite cluster mode: the commit log", () => {
  it("delivers another worker's commit with its write set, once", async () => {
    const file = tempDatabaseFile();
    const { member } = bus();
    const a = await engine(file, member());
    const b = await engine(file, member());
    const atB = heard(b);
    const id = await insert(a);
    await eventually(() => expect(atB.length).toBeGreaterThan(0));
    expect(atB).toEqual([[id]]);
    // A's own commits never come back to A, and B hears each of A's commits once (B's data_version
    // poll sees them too, but they were logged). Barriers instead of a pause: a second commit of
    // A's for B; for A, a write by a process that keeps no log, which A's poll reports as unknown.
    const atA = heard(a);
    const second = await insert(a);
    await eventually(() => expect(atB).toContainEqual([second]));
    // An "unknown" (re-check everything) may slip in when a poll's look at the log overlaps the
    // wake-up's: always safe, so only the write sets are counted.
    expect(atB.filter((heardOne) => heardOne !== "unknown")).toEqual([[id], [second]]);
    const shell = new Database(file);
    try {
      shell.prepare("DELETE FROM t_items WHERE id = ?").run(id);
    } finally {
      shell.close();
    }
    await eventually(() => expect(atA).toContain("unknown"));
    expect(atA).toEqual(["unknown"]);
  });

  it("catches up from the log when a read snapshot sees a commit whose wake-up never came", async () => {
    const file = tempDatabaseFile();
    const { member, state } = bus();
    const a = await engine(file, member());
    const b = await engine(file, member());
    const atB = heard(b);
    state.muted = true;
    const id = await insert(a);
    // The check that runs before a cached identity is trusted, in a snapshot of B's.
    // Wrapped: a promise returned from the read would be awaited by it.
    const { pending } = await b.read(async (tx) => ({ pending: b.syncExternalCommits(tx) }));
    expect(pending).toBeInstanceOf(Promise);
    await pending;
    expect(atB).toEqual([[id]]);
    // Caught up: nothing to wait for any more, with or without a snapshot.
    expect((await b.read(async (tx) => ({ pending: b.syncExternalCommits(tx) }))).pending).toBeUndefined();
    expect(b.syncExternalCommits()).toBeUndefined();
  });

  it("learns a commit by a process outside the cluster (the CLI) from the log, or as unknown without one", async () => {
    const file = tempDatabaseFile();
    const b = await engine(file, bus().member());
    const atB = heard(b);
    // A process opened on a database with a log appends to it; the poll of data_version wakes B.
    const cli = await engine(file);
    const id = await insert(cli);
    await eventually(() => expect(atB.length).toBeGreaterThan(0));
    expect(atB).toEqual([[id]]);
    // A writer that keeps no log (a sqlite3 shell) changes data_version with nothing logged.
    const shell = new Database(file);
    try {
      shell.prepare("DELETE FROM t_items WHERE id = ?").run(id);
    } finally {
      shell.close();
    }
    await eventually(() => expect(atB.length).toBeGreaterThan(1));
    expect(atB).toEqual([[id], "unknown"]);
  });

  it("keeps the log bounded: old rows are deleted by committing transactions", async () => {
    const file = tempDatabaseFile();
    const a = await engine(file, bus().member(), 10);
    for (let i = 0; i < 2 * PRUNE_EVERY + 5; i++) await insert(a);
    const db = new Database(file, { readonly: true });
    try {
      const { rows, newest } = db
        .prepare("SELECT count(*) AS rows, max(seq) AS newest FROM _commit_log")
        .get() as {
        rows: number;
        newest: number;
      };
      expect(newest).toBe(2 * PRUNE_EVERY + 5);
      expect(rows).toBeLessThanOrEqual(10 + PRUNE_EVERY);
      expect(rows).toBeGreaterThanOrEqual(10);
    } finally {
      db.close();
    }
  });

  it("keeps no log in a single process", async () => {
    const file = tempDatabaseFile();
    const single = await engine(file);
    await insert(single);
    expect(single.syncExternalCommits()).toBeUndefined();
    expect(single.commitChannel).toBeUndefined();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = '_commit_log'").get()).toBeUndefined();
    } finally {
      db.close();
    }
  });
});
