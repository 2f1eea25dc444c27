/**
 * The reactive engine (reactor.ts) and the shared query groups (query-group.ts), driven directly
 * with a real backend and no sockets: which commits re-run which watches, that a commit met while
 * a watch runs is never lost, the queue's order and bound, and what a group delivers to whom.
 * A commit reaches the reactor synchronously and a run starts synchronously up to its first
 * await, so "no re-run" is read right after the write, with no waiting.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Commit, ReadSet } from "../../src/backend/db/read-write-sets.ts";
import type { UserIdentity } from "../../src/backend/functions/define.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { AppError, defineSchema, defineTable, v } from "../../src/backend/server.ts";
import {
  identityKey,
  type Principal,
  QueryGroups,
  type Subscriber,
  type Subscription,
} from "../../src/backend/sync/query-group.ts";
import { Reactor, Watch } from "../../src/backend/sync/reactor.ts";
import { setupLogCapture } from "../helpers/log-capture.ts";
import { startTestBackend } from "../helpers/service.ts";

/** Two tables with the same index on the same field: a write to one must not pass for the other. */
const schema = defineSchema({
  messages: defineTable({ channel: v.string(), body: v.string() }).index("by_channel", ["channel"]),
  notes: defineTable({ channel: v.string(), body: v.string() }).index("by_channel", ["channel"]),
  others: defineTable({ channel: v.string(), body: v.string() }).index("by_channel", ["channel"]),
});

const { query } = functionsFor(schema);
/** Runs of each query, counted in the handler. */
const runs = new Map<string, number>();
const counted = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
/** While set, `r:gated` waits on it after reading. */
let gate: Promise<void> | null = null;

const r = {
  byChannel: query({
    args: { table: v.string(), channel: v.string() },
    handler: async (ctx, { table, channel }) => {
      counted(`byChannel:${table}:${channel}`);
      const rows = await (ctx.db as any)
        .query(table)
        .withIndex("by_channel", (q: any) => q.eq("channel", channel))
        .collect();
      return rows.map((row: { body: string }) => row.body);
    },
  }),
  get: query({
    args: { id: v.string() },
    handler: async (ctx, { id }) => (await (ctx.db as any).get(id))?.body ?? null,
  }),
  gated: query({
    args: { channel: v.string() },
    handler: async (ctx, { channel }) => {
      counted(`gated:${channel}`);
      const rows = await ctx.db
        .query("messages")
        .withIndex("by_channel", (q) => q.eq("channel", channel))
        .collect();
      if (gate) await gate;
      return rows.length;
    },
  }),
  /** Fails while the channel is empty: the reads of a failed run still count. */
  needsOne: query({
    args: { channel: v.string() },
    handler: async (ctx, { channel }) => {
      const rows = await ctx.db
        .query("messages")
        .withIndex("by_channel", (q) => q.eq("channel", channel))
        .collect();
      if (rows.length === 0) throw new AppError("NOT_FOUND", `nothing in ${channel}`);
      return rows.length;
    },
  }),
  whoami: query({
    args: {},
    handler: async (ctx) => (await ctx.auth.getUserIdentity())?.subject ?? null,
  }),
};

let backend: BackendRuntime;
/** The last commit sequence the reactor heard: the backend's commits and the test's own. */
let seq = 0;
let reactor: Reactor;
let stopListening: () => void = () => {};

beforeAll(async () => {
  backend = await startTestBackend({ schema, modules: { r } });
});
afterAll(async () => {
  stopListening();
  await backend?.close();
});

function newReactor(concurrency?: number): Reactor {
  stopListening();
  const made = new Reactor(
    backend.catalog,
    backend.commits,
    concurrency === undefined ? {} : { concurrency },
  );
  seq = backend.commits.lastSequence;
  stopListening = backend.onCommit((commit) => {
    seq = commit.sequence;
    made.handleCommit(commit);
  });
  return made;
}
beforeEach(() => {
  gate = null;
  reactor = newReactor();
});

/** Publishes a commit the backend did not make (another instance's, or one crafted for a rule). */
function inject(commit: Omit<Commit, "sequence">): void {
  backend.commits.publish(commit.writes, commit.unknown);
}

const insert = (table: "messages" | "notes" | "others", channel: string, body = "x") =>
  backend.write((db) => db.insert(table, { channel, body }));

function opened(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A watch running a real query; it can be held mid-run, and records what the reactor told it. */
class Probe extends Watch {
  runs = 0;
  heard: string[] = [];
  /** While set when a run starts, the run waits on it before returning its reads. */
  hold: Promise<void> | null = null;
  /** Holds the runs that start from now on; the returned function ends the hold and frees them. */
  holdRuns(): () => void {
    const gate = opened();
    this.hold = gate.promise;
    return () => {
      this.hold = null;
      gate.open();
    };
  }
  /** While set, a run throws (a bug in a watch: execute must not throw). */
  fail = false;
  constructor(
    private readonly read: () => Promise<ReadSet>,
    readonly priority = false,
  ) {
    super();
  }
  async execute(): Promise<ReadSet> {
    this.runs++;
    this.heard.push("run");
    const hold = this.hold; // the hold as the run starts: a test may set the next run's meanwhile
    const readSet = await this.read();
    if (hold) await hold;
    if (this.fail) throw new Error("broken watch");
    return readSet;
  }
  onInvalidated(): void {
    this.heard.push("invalidated");
  }
  onSettled(): void {
    this.heard.push("settled");
  }
}

const reads =
  (path: string, args: Record<string, unknown>): (() => Promise<ReadSet>) =>
  async () =>
    (await backend.runQuery(path, args)).readSet;
const channelProbe = (table: string, channel: string, priority = false) =>
  new Probe(reads("r:byChannel", { table, channel }), priority);

/** Adds `watch` and waits for its first run to settle. */
async function added(watch: Watch): Promise<void> {
  reactor.add(watch);
  await reactor.whenFresh(watch, seq);
}

describe("which commits re-run a watch", () => {
  it("runs a watch once when added and re-runs it for a write inside the range it read", async () => {
    const p = channelProbe("messages", "in");
    await added(p);
    expect(p.runs).toBe(1);
    expect(p.heard).toEqual(["invalidated", "run", "settled"]);
    expect(reactor.size).toBe(1);
    await insert("messages", "in");
    expect(p.runs).toBe(2);
    expect(p.heard.slice(3)).toEqual(["invalidated", "run"]);
    await reactor.whenFresh(p, seq);
    expect(p.heard.at(-1)).toBe("settled");
  });

  it("re-runs every watch of a table that a write touches", async () => {
    const a = channelProbe("messages", "both");
    const b = channelProbe("messages", "both");
    await added(a);
    await added(b);
    await insert("messages", "both");
    expect([a.runs, b.runs]).toEqual([2, 2]);
  });

  it("does not re-run for writes outside the range, to another table, or to another index value", async () => {
    const p = channelProbe("messages", "quiet");
    await added(p);
    await insert("messages", "loud");
    await insert("notes", "quiet"); // same index and value, other table
    expect(p.runs).toBe(1);
    // Both in one commit: the messages write buckets it, the notes write must still not match.
    await backend.write(async (db) => {
      await db.insert("messages", { channel: "loud", body: "x" });
      await db.insert("notes", { channel: "quiet", body: "x" });
    });
    expect(p.runs).toBe(1);
    expect(reactor.executions).toBe(1);
  });

  it("re-runs for a commit of several tables when one write touches it", async () => {
    const p = channelProbe("notes", "many");
    await added(p);
    await backend.write(async (db) => {
      await db.insert("messages", { channel: "many", body: "x" });
      await db.insert("notes", { channel: "many", body: "x" });
    });
    expect(p.runs).toBe(2);
  });

  it("re-runs when a document moves out of the range, or into it, or is deleted", async () => {
    const id = await insert("messages", "here");
    const p = channelProbe("messages", "here");
    await added(p);
    await backend.write((db) => db.patch(id, { channel: "away" })); // only the old key is inside
    expect(p.runs).toBe(2);
    await reactor.whenFresh(p, seq);
    await backend.write((db) => db.patch(id, { channel: "here" })); // only the new key is inside
    expect(p.runs).toBe(3);
    await reactor.whenFresh(p, seq);
    await backend.write((db) => db.delete(id));
    expect(p.runs).toBe(4);
  });

  it("re-runs for a write to a document it read by id, and only that document", async () => {
    const id = await insert("messages", "byid", "one");
    const other = await insert("messages", "byid", "two");
    const p = new Probe(reads("r:get", { id }));
    await added(p);
    await backend.write((db) => db.patch(other, { body: "2" }));
    expect(p.runs).toBe(1);
    // The same id in another table's write is another document (the messages write brings the
    // commit to the watch's bucket).
    inject({
      writes: [
        { table: "messages", id: other, before: null, after: null },
        { table: "notes", id, before: null, after: null },
      ],
    });
    expect(p.runs).toBe(1);
    await backend.write((db) => db.patch(id, { body: "1" }));
    expect(p.runs).toBe(2);
  });

  it("re-runs every idle watch for a commit whose writes are unknown", async () => {
    const a = channelProbe("messages", "u1");
    const b = new Probe(async () => ({ ids: [], ranges: [] })); // read nothing at all
    await added(a);
    await added(b);
    inject({ writes: [], unknown: true });
    expect([a.runs, b.runs]).toEqual([2, 2]);
  });

  it("re-runs for a read of an index the catalog does not know", async () => {
    const p = new Probe(async () => ({
      ids: [],
      ranges: [{ table: "messages", index: "gone", range: { lower: null, upper: null } as any }],
    }));
    await added(p);
    await insert("messages", "anything");
    expect(p.runs).toBe(2);
  });

  it("follows a watch's new reads: a re-run that reads another table moves it there", async () => {
    let table = "messages";
    const p = new Probe(async () => (await backend.runQuery("r:byChannel", { table, channel: "m" })).readSet);
    await added(p);
    table = "notes";
    await insert("messages", "m");
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(2);
    await insert("messages", "m"); // no longer read
    expect(p.runs).toBe(2);
    await insert("notes", "m");
    expect(p.runs).toBe(3);
  });

  it("follows a change of one of several tables it reads", async () => {
    let tables = ["messages", "notes"];
    const p = new Probe(async () => {
      const readSet: ReadSet = { ids: [], ranges: [] };
      for (const table of tables)
        await backend.runQuery("r:byChannel", { table, channel: "t3" }, {}, readSet);
      return readSet;
    });
    await added(p);
    tables = ["messages", "others"];
    await insert("messages", "t3");
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(2);
    await insert("notes", "t3"); // no longer read
    expect(p.runs).toBe(2);
    await insert("others", "t3");
    expect(p.runs).toBe(3);
  });

  it("forgets a removed watch: no re-run, and its waiters resolve", async () => {
    const p = channelProbe("messages", "rm");
    await added(p);
    const other = channelProbe("messages", "rm");
    await added(other);
    reactor.remove(p);
    reactor.remove(p); // twice is harmless
    expect(reactor.size).toBe(1);
    await insert("messages", "rm");
    expect(p.runs).toBe(1);
    expect(other.runs).toBe(2); // the other watch of the same table is still there
    p.heard.length = 0;
    reactor.invalidate(p);
    expect(p.heard).toEqual([]);
    await reactor.whenFresh(p, seq + 10); // resolves at once for a removed watch
  });

  it("removing a running watch resolves its waiters, and its result changes nothing", async () => {
    reactor = newReactor(1);
    const p = channelProbe("messages", "rr");
    const held = opened();
    p.hold = held.promise;
    reactor.add(p);
    const waited = reactor.whenFresh(p, seq);
    reactor.remove(p);
    await waited;
    // One slot: this watch runs only after the removed watch's run has ended.
    const after = new Probe(async () => ({ ids: [], ranges: [] }));
    reactor.add(after);
    held.open();
    await reactor.whenFresh(after, seq);
    await insert("messages", "rr");
    expect(p.runs).toBe(1);
    expect(p.heard).toEqual(["invalidated", "run"]); // not settled: it is gone
  });
});

describe("commits met while a watch runs", () => {
  it("re-runs a watch after its run when a commit during the run touched what it read", async () => {
    const p = channelProbe("messages", "during");
    const release = p.holdRuns();
    reactor.add(p);
    expect(p.runs).toBe(1);
    await insert("messages", "during"); // the run already read: its result is stale
    expect(p.runs).toBe(1);
    release();
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(2);
    expect(p.heard).toEqual(["invalidated", "run", "invalidated", "run", "settled"]);
  });

  it("does not re-run for a commit during the run that its reads do not cover", async () => {
    const p = channelProbe("messages", "calm");
    const held = opened();
    p.hold = held.promise;
    reactor.add(p);
    await insert("messages", "storm");
    await insert("notes", "calm");
    held.open();
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(1);
    expect(p.heard.at(-1)).toBe("settled");
  });

  it("re-runs a running watch after an unknown commit", async () => {
    const p = channelProbe("messages", "unk");
    const release = p.holdRuns();
    reactor.add(p);
    inject({ writes: [], unknown: true });
    expect(p.heard).toEqual(["invalidated", "run"]); // a running query re-run is told when it ends
    release();
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(2);
    expect(p.heard).toEqual(["invalidated", "run", "invalidated", "run", "settled"]);
  });

  it("keeps a commit for a watch still running when another finishes", async () => {
    const first = channelProbe("messages", "first");
    const second = channelProbe("messages", "second");
    const releaseFirst = first.holdRuns();
    const releaseSecond = second.holdRuns();
    reactor.add(first);
    reactor.add(second);
    await insert("messages", "second"); // met by both runs; only the second's reads cover it
    releaseFirst();
    await reactor.whenFresh(first, seq);
    expect(first.runs).toBe(1);
    releaseSecond();
    await reactor.whenFresh(second, seq);
    expect(second.runs).toBe(2);
  });

  it("does not count a commit published before a run started", async () => {
    const busy = channelProbe("messages", "busy");
    const releaseBusy = busy.holdRuns();
    reactor.add(busy); // keeps the log open
    await insert("messages", "late"); // logged, before the late watch exists
    const late = channelProbe("messages", "late");
    const releaseLate = late.holdRuns();
    reactor.add(late);
    releaseLate();
    await reactor.whenFresh(late, seq);
    expect(late.runs).toBe(1);
    releaseBusy();
    await reactor.whenFresh(busy, seq);
  });

  it("a commit after everything settled is not compared with a finished run's log", async () => {
    const a = channelProbe("messages", "l1");
    const release = a.holdRuns();
    reactor.add(a);
    await insert("messages", "l2"); // logged while a runs
    release();
    await reactor.whenFresh(a, seq);
    // A watch of "l2" whose first run starts later must not count that old commit.
    const b = channelProbe("messages", "l2");
    await added(b);
    expect(b.runs).toBe(1);
  });

  it("tells a running identity check (priority) at once when a commit touches it", async () => {
    const p = channelProbe("messages", "prio", true);
    await added(p);
    const release = p.holdRuns();
    p.heard.length = 0;
    reactor.invalidate(p);
    await insert("messages", "prio");
    expect(p.heard).toEqual(["invalidated", "run", "invalidated"]); // before its run ended
    await insert("messages", "other");
    expect(p.heard).toEqual(["invalidated", "run", "invalidated"]);
    release();
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(3);
  });

  it("does not tell a running query re-run early: it re-runs when it ends", async () => {
    const p = channelProbe("messages", "plain");
    await added(p);
    const release = p.holdRuns();
    p.heard.length = 0;
    reactor.invalidate(p);
    await insert("messages", "plain");
    expect(p.heard).toEqual(["invalidated", "run"]);
    release();
    await reactor.whenFresh(p, seq);
    expect(p.heard).toEqual(["invalidated", "run", "invalidated", "run", "settled"]);
  });

  it("a running identity check without the optional hooks does not stop the other watches' checks", async () => {
    /** A priority watch with no `onInvalidated`/`onSettled` (both are optional). */
    class Bare extends Watch {
      readonly priority = true;
      runs = 0;
      hold: Promise<void> | null = null;
      async execute(): Promise<ReadSet> {
        this.runs++;
        const hold = this.hold;
        const { readSet } = await backend.runQuery("r:byChannel", { table: "messages", channel: "bare" });
        if (hold) await hold;
        return readSet;
      }
    }
    const bare = new Bare();
    await added(bare);
    const other = channelProbe("messages", "bare"); // bucketed after it
    await added(other);
    const held = opened();
    bare.hold = held.promise;
    reactor.invalidate(bare);
    await insert("messages", "bare");
    expect(other.runs).toBe(2);
    bare.hold = null;
    held.open();
    await reactor.whenFresh(bare, seq);
    expect(bare.runs).toBe(3);
  });

  it("a watch invalidated while it runs runs again, once", async () => {
    const p = channelProbe("messages", "twice");
    const release = p.holdRuns();
    reactor.add(p);
    reactor.invalidate(p);
    reactor.invalidate(p); // already stale: nothing more to tell
    expect(p.heard).toEqual(["invalidated", "run", "invalidated"]);
    release();
    await reactor.whenFresh(p, seq); // no commit since: the first run covered it
    await reactor.whenFresh(p, seq); // the re-run
    expect(p.runs).toBe(2);
    expect(reactor.executions).toBe(2);
    // Told once when it went stale during the run, once more when that run ended stale.
    expect(p.heard).toEqual(["invalidated", "run", "invalidated", "invalidated", "run", "settled"]);
  });
});

describe("a run that throws", () => {
  const capture = setupLogCapture();

  it("is logged, keeps its old reads and does not re-run by itself", async () => {
    const p = channelProbe("messages", "boom");
    await added(p);
    process.env.LOG_LEVEL = "error";
    const logs = capture();
    p.fail = true;
    await insert("messages", "boom");
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(2);
    expect(logs.join("")).toContain("reactive execution failed");
    expect(logs.join("")).toContain("broken watch");
    // A commit met by a failing run: the run has no reads to compare it with, and ends quietly.
    const held = opened();
    p.hold = held.promise;
    reactor.invalidate(p);
    await insert("messages", "boom");
    held.open();
    await reactor.whenFresh(p, seq);
    expect(p.runs).toBe(3);
    p.hold = null;
    p.fail = false;
    await insert("messages", "boom"); // still bucketed by its old reads
    expect(p.runs).toBe(4);
  });
});

describe("the queue", () => {
  const blocked = (priority = false) => {
    const p = new Probe(async () => ({ ids: [], ranges: [] }), priority);
    const held = opened();
    p.hold = held.promise;
    return { p, open: held.open };
  };

  it("runs at most `concurrency` watches at once, and the rest as slots free", async () => {
    reactor = newReactor(2);
    const ws = [blocked(), blocked(), blocked()];
    for (const w of ws) reactor.add(w.p);
    expect(ws.map((w) => w.p.runs)).toEqual([1, 1, 0]);
    ws[0].open();
    await reactor.whenFresh(ws[0].p, seq);
    expect(ws[2].p.runs).toBe(1);
    for (const w of ws) w.open();
  });

  it("runs 8 watches at once by default", async () => {
    const ws = Array.from({ length: 9 }, () => blocked());
    for (const w of ws) reactor.add(w.p);
    expect(ws.map((w) => w.p.runs)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 0]);
    expect(reactor.executions).toBe(8);
    for (const w of ws) w.open();
    await reactor.whenFresh(ws[8].p, seq);
    expect(ws[8].p.runs).toBe(1);
  });

  it("starts identity checks before queued query re-runs, also when re-queued after a run", async () => {
    reactor = newReactor(1);
    const busy = blocked();
    const query = blocked();
    const check = blocked(true);
    reactor.add(busy.p);
    reactor.add(query.p);
    reactor.add(check.p);
    busy.open();
    await reactor.whenFresh(busy.p, seq);
    expect([check.p.runs, query.p.runs]).toEqual([1, 0]);
    // The check is invalidated during its run: after it ends it goes before the query again.
    reactor.invalidate(check.p);
    const again = opened();
    check.p.hold = again.promise;
    check.open();
    await new Promise<void>((resolve) => {
      const poll = () => (check.p.runs === 2 ? resolve() : setImmediate(poll));
      poll();
    });
    expect(query.p.runs).toBe(0);
    again.open();
    query.open();
    await reactor.whenFresh(query.p, seq);
    expect(query.p.runs).toBe(1);
  });

  it("a watch stale after its run queues behind the watches already waiting", async () => {
    reactor = newReactor(1);
    const w = blocked();
    reactor.add(w.p);
    reactor.invalidate(w.p); // stale during its run
    const x = blocked();
    reactor.add(x.p);
    w.open();
    await reactor.whenFresh(w.p, seq); // the first run has ended
    expect([w.p.runs, x.p.runs]).toEqual([1, 1]);
    x.open();
    await reactor.whenFresh(w.p, seq);
    expect(w.p.runs).toBe(2);
  });

  it("skips a queued watch removed before its turn", async () => {
    reactor = newReactor(1);
    const busy = blocked();
    const gone = blocked();
    const next = blocked();
    reactor.add(busy.p);
    reactor.add(gone.p);
    reactor.add(next.p);
    reactor.remove(gone.p);
    busy.open();
    next.open();
    await reactor.whenFresh(next.p, seq);
    expect([gone.p.runs, next.p.runs]).toEqual([0, 1]);
  });
});

describe("whenFresh", () => {
  it("resolves at once for a settled watch, and after the run that covers the sequence", async () => {
    const p = channelProbe("messages", "fresh");
    await added(p);
    await reactor.whenFresh(p, seq + 100); // idle: nothing pending
    const release = p.holdRuns();
    await insert("messages", "fresh");
    let done = false;
    const waited = reactor.whenFresh(p, seq).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    release();
    await waited;
    expect(p.runs).toBe(2);
  });

  it("a run that must re-run releases only waiters of sequences it covered", async () => {
    const p = channelProbe("messages", "cover");
    const held = opened();
    p.hold = held.promise;
    reactor.add(p);
    const before = seq;
    const early = reactor.whenFresh(p, before);
    const second = opened();
    await insert("messages", "cover"); // met by the run: it re-runs
    let lateDone = false;
    const late = reactor.whenFresh(p, seq).then(() => (lateDone = true));
    p.hold = second.promise;
    held.open();
    await early; // the first run covered `before`
    expect(p.runs).toBe(2);
    expect(lateDone).toBe(false);
    expect(p.waiters).toHaveLength(1); // a released waiter is not kept
    p.hold = null;
    second.open();
    await late;
    expect(p.waiters).toBeNull();
  });
});

describe("query groups", () => {
  const alice: UserIdentity = { subject: "alice", issuer: "i", tokenIdentifier: "i|alice" };
  const bob: UserIdentity = { subject: "bob", issuer: "i", tokenIdentifier: "i|bob" };
  const anon: Principal = { identity: null, token: null };

  function subscriber(): Subscriber & { got: [unknown, unknown][] } {
    const got: [unknown, unknown][] = [];
    return { got, deliver: (sub: Subscription, body: string) => got.push([sub.id, JSON.parse(body)]) };
  }
  let groups: QueryGroups;
  beforeEach(() => {
    groups = new QueryGroups(backend, reactor);
  });
  const settled = (sub: Subscription) => reactor.whenFresh(sub.group, seq);

  it("delivers the first result, then each changed result, to every member", async () => {
    const a = subscriber();
    const b = subscriber();
    const sa = groups.join(a, 1, "r:byChannel", { table: "messages", channel: "g1" }, anon);
    expect(sa.idJson).toBe("1");
    await settled(sa);
    expect(a.got).toEqual([[1, { value: [] }]]);
    const sb = groups.join(b, "x", "r:byChannel", { channel: "g1", table: "messages" }, anon);
    expect(sb.group).toBe(sa.group); // same args in another order: one group
    expect(sb.idJson).toBe('"x"');
    expect(b.got).toEqual([["x", { value: [] }]]); // a late joiner gets the result at once
    expect(groups.size).toBe(1);
    expect(runs.get("byChannel:messages:g1")).toBe(1);
    await insert("messages", "g1", "hi");
    await settled(sa);
    expect(a.got.at(-1)).toEqual([1, { value: ["hi"] }]);
    expect(b.got.at(-1)).toEqual(["x", { value: ["hi"] }]);
    expect(runs.get("byChannel:messages:g1")).toBe(2);
  });

  it("pushes nothing when a re-run gives the same result", async () => {
    const a = subscriber();
    const sub = groups.join(a, 1, "r:gated", { channel: "same" }, anon);
    await settled(sub);
    const id = await insert("messages", "same");
    await settled(sub);
    await backend.write((db) => db.patch(id, { body: "edited" })); // re-runs, count stays 1
    await settled(sub);
    expect(runs.get("gated:same")).toBe(3);
    expect(a.got).toEqual([
      [1, { value: 0 }],
      [1, { value: 1 }],
    ]);
  });

  it("a group whose run met a commit runs again and pushes the newer result", async () => {
    const held = opened();
    gate = held.promise;
    const a = subscriber();
    const sub = groups.join(a, 1, "r:gated", { channel: "met" }, anon);
    await insert("messages", "met"); // after the run read the channel
    gate = null;
    held.open();
    await settled(sub);
    expect(runs.get("gated:met")).toBe(2);
    expect(a.got.at(-1)).toEqual([1, { value: 1 }]);
  });

  it("delivers an error as an error body, and re-runs on the reads of the failed run", async () => {
    const a = subscriber();
    const sub = groups.join(a, 7, "r:needsOne", { channel: "err" }, anon);
    await settled(sub);
    expect(a.got).toEqual([[7, { error: { code: "NOT_FOUND", message: "nothing in err" } }]]);
    await insert("messages", "err");
    await settled(sub);
    expect(a.got.at(-1)).toEqual([7, { value: 1 }]);
  });

  it("a joiner before the first result gets it once, not at join", async () => {
    const held = opened();
    gate = held.promise;
    const a = subscriber();
    const b = subscriber();
    const sa = groups.join(a, 1, "r:gated", { channel: "early" }, anon);
    groups.join(b, 2, "r:gated", { channel: "early" }, anon);
    expect(b.got).toEqual([]);
    gate = null;
    held.open();
    await settled(sa);
    expect(a.got).toEqual([[1, { value: 0 }]]);
    expect(b.got).toEqual([[2, { value: 0 }]]);
  });

  it("groups by identity: another user, or anonymous, runs apart; the same user with another token shares", async () => {
    const a = subscriber();
    const sAlice = groups.join(a, 1, "r:whoami", {}, { identity: alice, token: "t1" });
    const sAlice2 = groups.join(a, 2, "r:whoami", {}, { identity: alice, token: "t2" });
    const sBob = groups.join(a, 3, "r:whoami", {}, { identity: bob, token: "t3" });
    const sAnon = groups.join(a, 4, "r:whoami", {}, anon);
    expect(sAlice2.group).toBe(sAlice.group);
    expect(new Set([sAlice.group, sBob.group, sAnon.group]).size).toBe(3);
    for (const s of [sAlice, sBob, sAnon]) await settled(s);
    expect(a.got).toEqual(
      expect.arrayContaining([
        [1, { value: "alice" }],
        [2, { value: "alice" }],
        [3, { value: "bob" }],
        [4, { value: null }],
      ]),
    );
    expect(a.got).toHaveLength(4);
    expect(identityKey(alice)).toBe("u:i|alice");
    expect(identityKey(null)).toBe("anon");
  });

  it("keys groups by path and by args", async () => {
    const a = subscriber();
    const s1 = groups.join(a, 1, "r:byChannel", { table: "messages", channel: "k1" }, anon);
    const s2 = groups.join(a, 2, "r:byChannel", { table: "messages", channel: "k2" }, anon);
    const s3 = groups.join(a, 3, "r:gated", { channel: "k1" }, anon);
    expect(new Set([s1.group, s2.group, s3.group]).size).toBe(3);
    expect(groups.size).toBe(3);
  });

  it("a group lives while it has members: the last to leave removes it from the reactor", async () => {
    const a = subscriber();
    const b = subscriber();
    const reactorBefore = reactor.size;
    const sa = groups.join(a, 1, "r:byChannel", { table: "messages", channel: "lv" }, anon);
    const sb = groups.join(b, 2, "r:byChannel", { table: "messages", channel: "lv" }, anon);
    await settled(sa);
    groups.leave(sa);
    expect(groups.size).toBe(1);
    expect(reactor.size).toBe(reactorBefore + 1);
    await insert("messages", "lv", "one");
    await settled(sb);
    expect(a.got).toEqual([[1, { value: [] }]]); // left: nothing more
    expect(b.got.at(-1)).toEqual([2, { value: ["one"] }]);
    groups.leave(sb);
    expect(groups.size).toBe(0);
    expect(reactor.size).toBe(reactorBefore);
    const before = runs.get("byChannel:messages:lv");
    await insert("messages", "lv", "two");
    expect(runs.get("byChannel:messages:lv")).toBe(before);
    // Joining again starts a fresh group, which runs at once.
    const sc = groups.join(a, 3, "r:byChannel", { table: "messages", channel: "lv" }, anon);
    expect(sc.group).not.toBe(sb.group);
    await settled(sc);
    expect(a.got.at(-1)).toEqual([3, { value: ["one", "two"] }]);
  });

  it("a group waits behind identity checks in the queue", async () => {
    reactor = newReactor(1);
    groups = new QueryGroups(backend, reactor);
    const busy = new Probe(async () => ({ ids: [], ranges: [] }));
    const held = opened();
    busy.hold = held.promise;
    reactor.add(busy);
    const a = subscriber();
    const sub = groups.join(a, 1, "r:byChannel", { table: "messages", channel: "queued" }, anon);
    const check = new Probe(async () => ({ ids: [], ranges: [] }), true);
    const checkHeld = opened();
    check.hold = checkHeld.promise;
    reactor.add(check); // added after the group, runs before it
    held.open();
    await reactor.whenFresh(busy, seq);
    expect(check.runs).toBe(1);
    expect(runs.get("byChannel:messages:queued")).toBeUndefined();
    checkHeld.open();
    await settled(sub);
    expect(a.got).toEqual([[1, { value: [] }]]);
  });

  it("a group left while its run is in flight delivers nothing", async () => {
    reactor = newReactor(1);
    groups = new QueryGroups(backend, reactor);
    const held = opened();
    gate = held.promise;
    const a = subscriber();
    const sub = groups.join(a, 1, "r:gated", { channel: "gone" }, anon);
    groups.leave(sub);
    // One slot: this watch runs only after the left group's run has ended.
    const after = new Probe(async () => ({ ids: [], ranges: [] }));
    reactor.add(after);
    gate = null;
    held.open();
    await reactor.whenFresh(after, seq);
    expect(runs.get("gated:gone")).toBe(1);
    expect(a.got).toEqual([]);
    expect(sub.group.body).toBeNull();
  });
});
