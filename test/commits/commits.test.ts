/**
 * The consistency core (commits/): commits numbered and delivered to the consumers in the order
 * commits/consumers.ts declares, whatever order they attached in (the running service's parts
 * attach under those names), the one history that answers "did a commit after N touch these
 * reads?", and the freshness stamp and its confirmation against other instances.
 */
import { describe, expect, it, vi } from "vitest";
import { IdentityCache } from "../../src/backend/auth/identity-cache.ts";
import type { AnnouncedCommit } from "../../src/backend/commits/announced.ts";
import { type CommitSource, Commits } from "../../src/backend/commits/commits.ts";
import { COMMIT_CONSUMERS } from "../../src/backend/commits/consumers.ts";
import { RECENT_COMMITS } from "../../src/backend/commits/history.ts";
import { Phases } from "../../src/backend/commits/phases.ts";
import { Catalog } from "../../src/backend/db/catalog.ts";
import type { Commit, DocumentWrite, ReadSet } from "../../src/backend/db/read-write-sets.ts";
import { ENV_CONSUMERS } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { decodeWrites, encodeWrites, payloadTables } from "../../src/backend/storage/commit-log/payload.ts";
import { encodeKey, prefixEnd } from "../../src/backend/storage/indexes/key.ts";
import { v } from "../../src/backend/values/validators.ts";
import { startTestService } from "../helpers/service.ts";

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

describe("commit consumers", () => {
  it("delivers every commit to the consumers in the order COMMIT_CONSUMERS declares, whatever the attach order", () => {
    const commits = new Commits(catalog, alone);
    const declared = COMMIT_CONSUMERS.flatMap(({ phase, consumers }) =>
      consumers.map((c) => `${phase}:${c}`),
    );
    const order: string[] = [];
    // Attached last to first on purpose: the declaration decides, not who came first.
    for (const { phase, consumers } of [...COMMIT_CONSUMERS].reverse()) {
      for (const consumer of [...consumers].reverse()) {
        commits.on(consumer, (c) =>
          order.push(`${c.sequence} ${phase}:${consumer} at ${commits.lastSequence}`),
        );
      }
    }
    expect(commits.lastSequence).toBe(0);
    commits.publish([write("users", "u1")]);
    commits.publish([], true);
    expect(order).toEqual([
      ...declared.map((name) => `1 ${name} at 1`),
      ...declared.map((name) => `2 ${name} at 2`),
    ]);
    // Every invalidation comes before every notification.
    expect(declared.indexOf("invalidate:env-store")).toBeLessThan(declared.indexOf("notify:live-queries"));
    expect(commits.attached().map((a) => `${a.phase}:${a.consumer}`)).toEqual(declared);
    expect(commits.attached().every((a) => a.listeners === 1)).toBe(true);
  });

  it("several listeners of one consumer hear it in attach order, at the consumer's place", () => {
    const commits = new Commits(catalog, alone);
    const order: string[] = [];
    commits.on("listeners", () => order.push("listener 1"));
    commits.on("scheduler", () => order.push("scheduler"));
    commits.on("listeners", () => order.push("listener 2"));
    commits.on("identity-cache", () => order.push("identity cache"));
    commits.publish([write("users", "u1")]);
    expect(order).toEqual(["identity cache", "scheduler", "listener 1", "listener 2"]);
  });

  it("a failing notify listener does not keep the commit from the others; unsubscribed ones hear nothing", () => {
    const commits = new Commits(catalog, alone);
    const heard: Commit[] = [];
    const dropped: Commit[] = [];
    commits.on("live-queries", () => {
      throw new Error("listener bug");
    });
    commits.on("listeners", (c) => heard.push(c));
    const unsubscribe = commits.on("listeners", (c) => dropped.push(c));
    unsubscribe();
    const writes = [write("users", "u1")];
    commits.publish(writes);
    expect(heard).toEqual([{ sequence: 1, writes, unknown: false }]);
    expect(dropped).toEqual([]);
  });

  it("a failing invalidation is not contained: the publisher hears it and no one is notified", () => {
    const commits = new Commits(catalog, alone);
    const notified: number[] = [];
    commits.on("listeners", (c) => notified.push(c.sequence));
    commits.on("identity-cache", () => {
      throw new Error("cannot invalidate");
    });
    expect(() => commits.publish([write("users", "u1")])).toThrow("cannot invalidate");
    expect(notified).toEqual([]);
  });

  it("refuses a consumer it does not declare, and a consumer declared twice", () => {
    const phases = new Phases(ENV_CONSUMERS);
    expect(() => phases.on("other" as "jwt-verifier", () => {})).toThrow('unknown consumer "other"');
    const twice = [
      { phase: "a", consumers: ["x"] },
      { phase: "b", consumers: ["x"] },
    ] as const;
    expect(() => new Phases(twice)).toThrow('consumer "x" declared twice');
  });
});

describe("the running backend's consumers", () => {
  it("each part attaches under its declared name, so the declaration is the delivery order", async () => {
    const app = await startTestService({ schema: defineSchema({}), modules: {} });
    try {
      const listening = app.backend.commits
        .attached()
        .filter((a) => a.listeners > 0)
        .map((a) => a.consumer);
      expect(listening).toEqual(["identity-cache", "env-store", "live-queries", "presence", "scheduler"]);
    } finally {
      await app.close();
    }
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
    // Past the most it keeps unretained (twice RECENT_COMMITS: it forgets in batches).
    for (let i = 0; i < 2 * RECENT_COMMITS + 10; i++) commits.publish([write("messages", `n${i}`)]);
    // Retained: the answer is exact (nothing after it wrote "early").
    expect(history.touchedSince(retained, byId("messages", "early"))).toBe(false);
    history.release(retained);
    commits.publish([write("messages", "one-more")]);
    // Released: the history no longer reaches back that far, so it assumes the worst.
    expect(history.touchedSince(retained, byId("messages", "early"))).toBe(true);
    expect(history.touchedSince(commits.lastSequence - 1, byId("messages", "early"))).toBe(false);
  });

  it("forgets in batches: at least the latest RECENT_COMMITS, never more than twice as many", () => {
    const commits = new Commits(catalog, alone);
    const { history } = commits;
    const first = commits.lastSequence;
    commits.publish([write("messages", "early")]);
    // Up to twice RECENT_COMMITS nothing is forgotten: the answer about "early" stays exact.
    for (let i = 1; i < 2 * RECENT_COMMITS; i++) commits.publish([write("messages", `n${i}`)]);
    expect(history.touchedSince(first, byId("messages", "early"))).toBe(true);
    expect(history.touchedSince(first + 1, byId("messages", "early"))).toBe(false);
    // One more: the oldest are dropped, the latest RECENT_COMMITS still answer exactly.
    commits.publish([write("messages", "last")]);
    expect(history.touchedSince(first + 1, byId("messages", "early"))).toBe(true);
    const recent = commits.lastSequence - RECENT_COMMITS;
    expect(history.touchedSince(recent, byId("messages", "early"))).toBe(false);
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
    commits.on("identity-cache", (c) => invalidated.push(c));

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

/** Commits following a fake engine whose `announce` hands them another instance's payload. */
function following() {
  const external = new Set<(payload?: string) => void>();
  const commits = new Commits(catalog, {
    onExternalCommit: (listener) => {
      external.add(listener);
      return () => external.delete(listener);
    },
  });
  commits.followOtherInstances();
  const heard: Commit[] = [];
  // Reads only what is at hand: the commit and its tables, never its writes.
  commits.on("listeners", (c) => heard.push(c));
  const announce = (payload: string | undefined) => {
    for (const l of external) l(payload);
  };
  return { commits, heard, announce };
}

describe("another instance's commit, parsed only when needed", () => {
  it("encodes the tables written in a header before the write set, and decodes both", () => {
    const writes = [write("messages", "m1", "a"), write("users", "u1"), write("messages", "m2", "b")];
    const payload = encodeWrites(writes);
    expect(payload.startsWith("messages,users[")).toBe(true);
    expect(payloadTables(payload)).toEqual(["messages", "users"]);
    expect(decodeWrites(payload)).toEqual(writes);
    // An older version's payload (no header) still decodes; it has no header to skip with.
    const legacy = JSON.stringify(writes);
    expect(payloadTables(legacy)).toBeNull();
    expect(decodeWrites(legacy)).toEqual(writes);
    // A header that leaves out a table written is malformed: a header never hides a write.
    expect(decodeWrites(`messages${JSON.stringify(writes)}`)).toBeNull();
    for (const bad of ["", "*", "mess ages[]", ",messages[{}]", "messages[{"])
      expect(decodeWrites(bad)).toBeNull();
  });

  it("a commit of a table nobody here reads is not parsed, and the history says that table changed", () => {
    const { commits, heard, announce } = following();
    const stamp = commits.stamp();
    const parse = vi.spyOn(JSON, "parse");
    try {
      announce(encodeWrites([write("messages", "m1", "general")]));
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    expect(heard).toHaveLength(1);
    const commit = heard[0] as AnnouncedCommit;
    expect(commit.tables).toEqual(["messages"]);
    expect(commit.isParsed).toBe(false);
    // Keys unknown: any read of the table counts as changed, by id or by range, other ids too.
    expect(commits.changedSince(stamp, byId("messages", "m1"))).toBe(true);
    expect(commits.changedSince(stamp, byId("messages", "another"))).toBe(true);
    expect(commits.changedSince(stamp, channelRead("elsewhere"))).toBe(true);
    // Other tables were not touched.
    expect(commits.changedSince(stamp, byId("sessions", "s1"))).toBe(false);
    // Recorded by table for good: parsing it now (a late reader) changes nothing in the history.
    expect(commit.writes.map((w) => w.id)).toEqual(["m1"]);
    expect(commits.changedSince(stamp, byId("messages", "another"))).toBe(true);
  });

  it("a commit a listener reads during its delivery is parsed once and recorded by document", () => {
    const { commits, announce } = following();
    const read: string[][] = [];
    commits.on("listeners", (c) => read.push(c.writes.map((w) => w.id)));
    const stamp = commits.stamp();
    announce(encodeWrites([write("messages", "m1", "general")]));
    expect(read).toEqual([["m1"]]);
    expect(commits.changedSince(stamp, byId("messages", "m1"))).toBe(true);
    expect(commits.changedSince(stamp, byId("messages", "another"))).toBe(false);
    // Without a retained reader a range read of the table still counts as touched (documents dropped).
    expect(commits.changedSince(stamp, channelRead("elsewhere"))).toBe(true);
  });

  it("a retained reader (a reactor run) gets the exact answer: the documents are parsed when it asks", () => {
    const { commits, heard, announce } = following();
    const start = commits.lastSequence;
    commits.history.retain(start);
    announce(encodeWrites([write("messages", "m1", "general")]));
    expect((heard[0] as AnnouncedCommit).isParsed).toBe(false);
    expect(commits.history.touchedSince(start, channelRead("elsewhere"))).toBe(false);
    expect(commits.history.touchedSince(start, channelRead("general"))).toBe(true);
    expect((heard[0] as AnnouncedCommit).isParsed).toBe(true);
    commits.history.release(start);
    // Released: kept by document now (it was parsed), so only a range read counts as touched.
    expect(commits.history.touchedSince(start, byId("messages", "another"))).toBe(false);
    expect(commits.history.touchedSince(start, channelRead("elsewhere"))).toBe(true);
  });

  it("the identity cache parses only commits of tables its entries read", () => {
    const { commits, heard, announce } = following();
    const cache = new IdentityCache(commits);
    const identity = { subject: "u1", issuer: "iss", tokenIdentifier: "iss|u1" };
    const exp = Math.floor(Date.now() / 1000) + 600;
    cache.set(
      "token",
      identity,
      { ids: [{ table: "sessions", id: "s1" }], ranges: [] },
      exp,
      commits.stamp(),
    );
    expect(cache.get("token")).toBeDefined();
    announce(encodeWrites([write("messages", "m1", "general")]));
    expect((heard.at(-1) as AnnouncedCommit).isParsed).toBe(false);
    announce(encodeWrites([write("sessions", "s2")]));
    expect((heard.at(-1) as AnnouncedCommit).isParsed).toBe(true);
    expect(cache.get("token")).toBeDefined();
    announce(encodeWrites([write("messages", "m2"), write("sessions", "s1")]));
    expect(cache.get("token")).toBeUndefined();
  });

  it("a header followed by a write set that does not parse is followed by an unknown commit", async () => {
    const { commits, heard, announce } = following();
    const cleared: Commit[] = [];
    commits.on("identity-cache", (c) => {
      if (c.unknown) cleared.push(c);
    });
    const stamp = commits.stamp();
    // Nobody reads `messages` here: skipped at first, found malformed by a later reader.
    announce("messages[{not json");
    expect(heard).toHaveLength(1);
    expect(cleared).toEqual([]);
    expect(commits.history.touchedSince(stamp.sequence, byId("sessions", "s1"))).toBe(false);
    expect(heard[0].writes).toEqual([]);
    expect(heard[0].unknown).toBe(true);
    await Promise.resolve();
    expect(cleared).toHaveLength(1);
    expect(commits.changedSince(stamp, byId("sessions", "s1"))).toBe(true);
    // Read during its delivery: the unknown commit follows at once.
    commits.on("listeners", (c) => void c.writes);
    announce('sessions[{"table":"users","id":"u1","before":null,"after":null}]');
    expect(cleared).toHaveLength(2);
    expect(heard.map((c) => c.unknown)).toEqual([true, true, true, true]);
  });
});
