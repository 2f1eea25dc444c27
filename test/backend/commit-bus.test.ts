/** The commit bus: numbering and the hearers-before-listeners order. */
import { describe, expect, it } from "vitest";
import { CommitBus } from "../../src/backend/commit-bus.ts";
import type { Commit } from "../../src/backend/db/read-write-sets.ts";

// The failing listener is logged; the test asserts on deliveries, not logs.
process.env.LOG_LEVEL ??= "silent";

function bus() {
  const order: string[] = [];
  const commits = new CommitBus([
    (c) => order.push(`first ${c.sequence}`),
    (c) => order.push(`second ${c.sequence}`),
  ]);
  return { commits, order };
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
});
