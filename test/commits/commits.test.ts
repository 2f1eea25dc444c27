/**
 * The consistency core (commits/): commits numbered and delivered in named phases whatever order
 * listeners registered in, the one history that answers "did a commit after N touch these
 * reads?", and the freshness stamp and its confirmation against other instances.
 */
import { describe, expect, it } from "vitest";
import { type CommitSource, Commits } from "../../src/backend/commits/commits.ts";
import { RECENT_COMMITS } from "../../src/backend/commits/history.ts";
import { Phases } from "../../src/backend/commits/phases.ts";
import { Catalog } from "../../src/backend/db/catalog.ts";
import type { Commit, DocumentWrite, ReadSet } from "../../src/backend/db/read-write-sets.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { encodeWrites } from "../../src/backend/storage/commit-log/payload.ts";
import { encodeKey, prefixEnd } from "../../src/backend/storage/indexes/key.ts";
import { v } from "../../src/backend/values/validators.ts";

// The failing listener is logged; the test asserts on deliveries, not logs.
process.env.LOG_LEVEL ??= "silent";

const catalog = new Catalog(
  defineSchema({ messages: defineTable({ channel: v.string() }).index("by_channel", ["channel"]) }),
);

/** One process: no other instance, nothing to catch up with. */
const alone: CommitSource = { onExternalCommit: () => () => {} };

const write = (table: string, id: string, channel?: string): DocumentWrite => ({
  table,
  id,
  before: null,
  after: { _id: id, _creationTime: 1, ...(channel === undefined ? {} : { channel }) },
});
const byId = (table: string, id: string): ReadSet => ({ ids: [{ table, id }], ranges: [] });
/** A read of every message of `channel` through the index. */
const channelRead = (channel: string): ReadSet => {
  const prefix = encodeKey([channel]);
  return {
    ids: [],
    ranges: [{ table: "messages", index: "by_channel", range: { lower: prefix, upper: prefixEnd(prefix) } }],
  };
};

describe("commit phases", () => {
  it("delivers every commit to the invalidate phase before the notify phase, whatever the registration order", () => {
    const commits = new Commits(catalog, alone);
    const order: string[] = [];
    // Registered in the "wrong" order on purpose: the phase decides, not who came first.
    commits.on("notify", (c) => order.push(`notify ${c.sequence} at ${commits.lastSequence}`));
    commits.on("invalidate", (c) => order.push(`invalidate ${c.sequence}`));
    commits.on("notify", (c) => order.push(`notify again ${c.sequence}`));
    commits.on("invalidate", (c) => order.push(`invalidate again ${c.sequence}`));
    expect(commits.lastSequence).toBe(0);
    commits.publish([write("users", "u1")]);
    commits.publish([], true);
    expect(order).toEqual([
      "invalidate 1",
      "invalidate again 1",
      "notify 1 at 1",
      "notify again 1",
      "invalidate 2",
      "invalidate again 2",
      "notify 2 at 2",
      "notify again 2",
    ]);
  });

  it("a failing notify listener does not keep the commit from the others; unsubscribed ones hear nothing", () => {
    const commits = new Commits(catalog, alone);
    const heard: Commit[] = [];
    const dropped: Commit[] = [];
    commits.on("notify", () => {
      throw new Error("listener bug");
    });
    commits.on("notify", (c) => heard.push(c));
    const unsubscribe = commits.on("notify", (c) => dropped.push(c));
    unsubscribe();
    const writes = [write("users", "u1")];
    commits.publish(writes);
    expect(heard).toEqual([{ sequence: 1, writes, unknown: false }]);
    expect(dropped).toEqual([]);
  });

  it("a failing invalidation is not contained: the publisher hears it and no one is notified", () => {
    const commits = new Commits(catalog, alone);
    const notified: number[] = [];
    commits.on("notify", (c) => notified.push(c.sequence));
    commits.on("invalidate", () => {
      throw new Error("cannot invalidate");
    });
    expect(() => commits.publish([write("users", "u1")])).toThrow("cannot invalidate");
    expect(notified).toEqual([]);
  });

  it("refuses a phase it does not have", () => {
    const phases = new Phases<"reconfigure" | "recheck", void>(["reconfigure", "recheck"]);
    expect(() => phases.on("other" as "recheck", () => {})).toThrow('unknown phase "other"');
  });
});

describe("commit history", () => {
  it("says whether a commit after a sequence touched a read set: by id, by index range, or unknown", () => {
    const commits = new Commits(catalog, alone);
    const start = commits.lastSequence;
    commits.history.retain(start); // as a reactor run does: range reads are matched exactly
    commits.publish([write("messages", "m1", "general")]);
    const afterFirst = commits.lastSequence;
    commits.publish([write("messages", "m2", "random")]);
    const { history } = commits;
    expect(history.touchedSince(start, byId("messages", "m1"))).toBe(true);
    expect(history.touchedSince(afterFirst, byId("messages", "m1"))).toBe(false);
    expect(history.touchedSince(start, byId("notes", "m1"))).toBe(false); // same id, other table
    expect(history.touchedSince(start, channelRead("general"))).toBe(true);
    expect(history.touchedSince(afterFirst, channelRead("general"))).toBe(false);
    expect(history.touchedSince(afterFirst, channelRead("random"))).toBe(true);
    expect(history.touchedSince(commits.lastSequence, channelRead("random"))).toBe(false);
    commits.publish([], true);
    expect(history.touchedSince(afterFirst + 1, channelRead("nothing-wrote-here"))).toBe(true);
  });

  it("without a retained reader it keeps no documents: a range read of a written table counts as touched", () => {
    const commits = new Commits(catalog, alone);
    const start = commits.lastSequence;
    commits.publish([write("messages", "m1", "general")]);
    const { history } = commits;
    expect(history.touchedSince(start, channelRead("random"))).toBe(true); // assumed, not matched
    expect(
      history.touchedSince(start, { ids: [], ranges: [{ ...channelRead("x").ranges[0], table: "notes" }] }),
    ).toBe(false);
    expect(history.touchedSince(start, byId("messages", "m1"))).toBe(true);
    expect(history.touchedSince(start, byId("messages", "m2"))).toBe(false);
  });

  it("keeps the latest commits, and every commit after a retained sequence until it is released", () => {
    const commits = new Commits(catalog, alone);
    const { history } = commits;
    commits.publish([write("messages", "early")]);
    const retained = commits.lastSequence;
    history.retain(retained);
    for (let i = 0; i < RECENT_COMMITS + 10; i++) commits.publish([write("messages", `n${i}`)]);
    // Retained: the answer is exact (nothing after it wrote "early").
    expect(history.touchedSince(retained, byId("messages", "early"))).toBe(false);
    history.release(retained);
    commits.publish([write("messages", "one-more")]);
    // Released: the history no longer reaches back that far, so it assumes the worst.
    expect(history.touchedSince(retained, byId("messages", "early"))).toBe(true);
    expect(history.touchedSince(commits.lastSequence - 1, byId("messages", "early"))).toBe(false);
  });
});

describe("freshness stamp", () => {
  it("captures sequence and epoch; a result is stale once a commit touched its reads or the epoch moved", () => {
    const commits = new Commits(catalog, alone);
    const first = commits.stamp();
    expect(commits.stamp()).toBe(first); // nothing happened: the same stamp, nothing allocated
    expect(commits.changedSince(first, byId("sessions", "s1"))).toBe(false);
    commits.publish([write("users", "u1")]);
    const second = commits.stamp();
    expect(second).toEqual({ sequence: 1, epoch: 0 });
    expect(commits.changedSince(first, byId("sessions", "s1"))).toBe(false); // not touched
    commits.publish([write("sessions", "s1")]);
    expect(commits.changedSince(second, byId("sessions", "s1"))).toBe(true);
    const third = commits.stamp();
    commits.newEpoch();
    expect(commits.stamp()).toEqual({ sequence: 2, epoch: 1 });
    expect(commits.changedSince(third, byId("nothing", "x"))).toBe(true);
  });

  it("confirm: nothing to wait for in one process", () => {
    const commits = new Commits(catalog, alone);
    expect(commits.confirm(commits.stamp())).toBeUndefined();
  });

  it("confirm catches up with other instances: their commits run the invalidate phase before it resolves", async () => {
    const external = new Set<(payload?: string) => void>();
    let behind: string[] = [];
    const source: CommitSource = {
      onExternalCommit: (listener) => {
        external.add(listener);
        return () => external.delete(listener);
      },
      // As PostgreSQL's follower: delivers what other instances committed since the last catch-up.
      syncExternalCommits: () => {
        if (behind.length === 0) return Promise.resolve();
        const payloads = behind;
        behind = [];
        return Promise.resolve().then(() => {
          for (const payload of payloads) for (const l of external) l(payload);
        });
      },
    };
    const commits = new Commits(catalog, source);
    const stopFollowing = commits.followOtherInstances();
    const invalidated: Commit[] = [];
    commits.on("invalidate", (c) => invalidated.push(c));

    const quiet = commits.stamp();
    expect(await commits.confirm(quiet)).toBe(false); // caught up, nothing arrived

    const stamp = commits.stamp();
    behind = [encodeWrites([write("sessions", "revoked")])];
    const confirmed = commits.confirm(stamp);
    expect(invalidated).toEqual([]);
    expect(await confirmed).toBe(true);
    expect(invalidated.map((c) => c.writes.map((w) => w.id))).toEqual([["revoked"]]);
    expect(commits.changedSince(stamp, byId("sessions", "revoked"))).toBe(true);

    // A notification without a write set: an unknown commit, which touches everything.
    for (const l of external) l(undefined);
    expect(invalidated.at(-1)).toMatchObject({ unknown: true, writes: [] });
    stopFollowing();
    expect(external.size).toBe(0);
  });
});
