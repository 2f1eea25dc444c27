/** The commit bus: numbering, the hearers-before-listeners order, and the announcement to other instances. */
import { afterEach, describe, expect, it } from "vitest";
import { CommitBus } from "../../src/backend/commit-bus.ts";
import type { Commit } from "../../src/backend/db/read-write-sets.ts";
import { decodeWrites } from "../../src/backend/storage/commit-payload.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite.ts";

// The failing listener is logged; the test asserts on deliveries, not logs.
process.env.LOG_LEVEL ??= "silent";

/** Real SQLite engine that records what it is asked to announce to other instances. */
class RecordingEngine extends SqliteEngine {
  readonly announced: string[] = [];
  override async publishCommit(payload?: string): Promise<void> {
    if (payload !== undefined) this.announced.push(payload);
  }
}

const engines: SqliteEngine[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
});

function bus() {
  const engine = new RecordingEngine({ filename: ":memory:" });
  engines.push(engine);
  const order: string[] = [];
  const commits = new CommitBus(engine, [
    (c) => order.push(`first ${c.sequence}`),
    (c) => order.push(`second ${c.sequence}`),
  ]);
  return { engine, commits, order };
}

const write = (table: string, id: string) => ({
  table,
  id,
  before: null,
  after: { _id: id, _creationTime: 1 },
});

describe("commit bus", () => {
  it("numbers commits and delivers each to the hearers, in order, before any listener", () => {
    const { commits, order } = bus();
    commits.onCommit((c) => order.push(`listener ${c.sequence} at ${commits.lastSequence}`));
    expect(commits.lastSequence).toBe(0);
    commits.publish([write("users", "u1")]);
    commits.publish([], true);
    expect(order).toEqual([
      "first 1",
      "second 1",
      "listener 1 at 1",
      "first 2",
      "second 2",
      "listener 2 at 2",
    ]);
  });

  it("a failing listener does not keep the commit from the others; unsubscribed ones hear nothing", () => {
    const { commits } = bus();
    const heard: Commit[] = [];
    const dropped: Commit[] = [];
    commits.onCommit(() => {
      throw new Error("listener bug");
    });
    commits.onCommit((c) => heard.push(c));
    const unsubscribe = commits.onCommit((c) => dropped.push(c));
    unsubscribe();
    const writes = [write("users", "u1")];
    commits.publish(writes);
    expect(heard).toEqual([{ sequence: 1, writes, unknown: false }]);
    expect(dropped).toEqual([]);
  });

  it("a commit of this process is delivered here and its write set announced to other instances", () => {
    const { commits, engine, order } = bus();
    const writes = [write("sessions", "s1"), write("_env", "e1")];
    commits.committed(writes);
    expect(order).toEqual(["first 1", "second 1"]);
    expect(engine.announced.map((p) => decodeWrites(p))).toEqual([writes]);
  });
});
