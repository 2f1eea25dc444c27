/**
 * The commit log follower against a log kept in memory (the SQL is exercised on PostgreSQL in
 * test/postgres): order, this instance's own numbers, rolled-back and pruned numbers, hints, and
 * catch-up rounds shared by the callers that arrived before they started.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { CommitFollower } from "../../src/backend/storage/commit-log/follower.ts";
import { HEAD_SQL, OLDEST_SQL, READ_AFTER_SQL } from "../../src/backend/storage/commit-log/log.ts";

/** An in-memory commit log answering the follower's statements; counts the catch-up reads. */
function memoryLog() {
  const rows: { seq: number; origin: string; writes: string | null }[] = [];
  let reads = 0;
  let gate: Promise<void> | undefined;
  return {
    rows,
    reads: () => reads,
    /** Holds catch-up reads until the returned function is called. */
    hold(): () => void {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      return () => {
        gate = undefined;
        open();
      };
    },
    async query(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
      if (sql === HEAD_SQL) return [{ seq: rows.at(-1)?.seq ?? 0 }];
      if (sql === OLDEST_SQL) return [{ seq: rows[0]?.seq ?? null }];
      if (sql === READ_AFTER_SQL) {
        reads++;
        const snapshot = rows.filter((r) => r.seq > Number(params[0])).slice(0, Number(params[1]));
        await gate;
        return snapshot;
      }
      return [];
    },
  };
}

const followers: CommitFollower[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const f of followers.splice(0)) f.close();
});

async function follow(log: ReturnType<typeof memoryLog>) {
  const follower = new CommitFollower({
    query: (sql, params) => log.query(sql, params),
    pollIntervalMs: 3_600_000,
  });
  followers.push(follower);
  await follower.start();
  const heard: (string | undefined)[] = [];
  follower.onExternalCommit((p) => heard.push(p));
  return { follower, heard };
}

describe("commit log follower", () => {
  it("starts at the head and delivers later commits in order, skipping its own and rolled-back numbers", async () => {
    const log = memoryLog();
    log.rows.push({ seq: 1, origin: "b", writes: "before start" });
    const { follower, heard } = await follow(log);
    follower.drew(3); // its own commit
    log.rows.push(
      { seq: 2, origin: "b", writes: "two" },
      { seq: 3, origin: "me", writes: "mine" },
      // 4 was rolled back: never in the log
      { seq: 5, origin: "sql", writes: null },
    );
    await follower.sync();
    expect(heard).toEqual(["two", undefined]);
    expect(follower.position).toBe(5);
  });

  it("applies a hint for the next number directly and catches up on a hint that skips numbers", async () => {
    const log = memoryLog();
    const { follower, heard } = await follow(log);
    follower.hint(1, "one");
    expect(heard).toEqual(["one"]);
    log.rows.push({ seq: 1, origin: "b", writes: "one" }, { seq: 2, origin: "b", writes: "two" });
    log.rows.push({ seq: 3, origin: "b", writes: "three" });
    follower.hint(3, "three"); // 2 was not heard: read the log
    await follower.sync();
    expect(heard).toEqual(["one", "two", "three"]);
    follower.hint(2, "two"); // late and already delivered
    expect(heard).toHaveLength(3);
  });

  it("waits for the hint of a missing number, its own wait per gap, before reading the log", async () => {
    const log = memoryLog();
    const { follower, heard } = await follow(log);
    // Only the early-hint timer is faked; the round a timer starts runs on a real setImmediate.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const roundRan = () => new Promise((r) => setImmediate(r));
    follower.hint(1, "one");
    follower.hint(3, "three"); // 2 missing: its hint is usually on its way
    await vi.advanceTimersByTimeAsync(20);
    follower.hint(2, "two");
    expect(heard).toEqual(["one", "two", "three"]);
    follower.hint(5, "five"); // 4 missing, from now on
    // The timer armed for 2 fires: 2 came, so 4 gets a wait of its own instead of a log read.
    await vi.advanceTimersByTimeAsync(15);
    await roundRan();
    expect(log.reads()).toBe(0);
    log.rows.push(
      { seq: 1, origin: "b", writes: "one" },
      { seq: 2, origin: "b", writes: "two" },
      { seq: 3, origin: "b", writes: "three" },
      { seq: 5, origin: "b", writes: "five" },
    );
    // 4 never announced (rolled back): once its wait is over, a round reads the log.
    await vi.advanceTimersByTimeAsync(30);
    await roundRan();
    expect(log.reads()).toBe(1);
    await follower.sync();
    expect(heard).toEqual(["one", "two", "three", "five"]);
    expect(follower.position).toBe(5);
  });

  it("delivers one unknown commit when the numbers it missed were pruned", async () => {
    const log = memoryLog();
    const { follower, heard } = await follow(log);
    log.rows.push({ seq: 7, origin: "b", writes: "seven" }, { seq: 8, origin: "b", writes: "eight" });
    await follower.sync();
    expect(heard).toEqual([undefined]);
    expect(follower.position).toBe(8);
  });

  it("shares a round among callers that arrived before it started; later callers get the next round", async () => {
    const log = memoryLog();
    const { follower, heard } = await follow(log);
    const open = log.hold();
    const first = [follower.sync(), follower.sync(), follower.sync()];
    await new Promise((r) => setImmediate(r));
    expect(log.reads()).toBe(1);
    // Committed after the running round read the log: only a new round may answer these callers.
    log.rows.push({ seq: 1, origin: "b", writes: "late" });
    let secondDone = false;
    const second = [follower.sync(), follower.sync()];
    void Promise.all(second).then(() => (secondDone = true));
    open();
    await Promise.all(first);
    expect(heard).toEqual([]);
    expect(secondDone).toBe(false);
    await Promise.all(second);
    expect(heard).toEqual(["late"]);
    expect(log.reads()).toBe(2);
  });

  it("re-checks everything when a failed commit's number was already passed", async () => {
    const log = memoryLog();
    const { follower, heard } = await follow(log);
    follower.drew(1);
    expect(follower.position).toBe(1);
    follower.abandoned([1]);
    expect(heard).toEqual([undefined]);
  });

  it("does not pass a missing number until every transaction that may have drawn it has ended (PostgreSQL)", async () => {
    const log = memoryLog();
    let drawers = { drawn: 0, drawers: [] as string[] };
    let asked = 0;
    const follower = new CommitFollower({
      query: (sql, params) => log.query(sql, params),
      pollIntervalMs: 3_600_000,
      drawers: async () => {
        asked++;
        return drawers;
      },
    });
    followers.push(follower);
    await follower.start();
    const heard: (string | undefined)[] = [];
    follower.onExternalCommit((p) => heard.push(p));
    // Transaction t1 drew 1 and is still committing; 2 (drawn later) is already visible.
    drawers = { drawn: 2, drawers: ["t1"] };
    log.rows.push({ seq: 2, origin: "b", writes: "two" });
    let synced = false;
    const sync = follower.sync().then(() => (synced = true));
    while (asked < 4) await new Promise((r) => setTimeout(r, 1));
    expect(synced).toBe(false);
    expect(heard).toEqual([]);
    expect(follower.position).toBe(0);
    // t1 commits (its row visible before its lock goes).
    log.rows.unshift({ seq: 1, origin: "b", writes: "one" });
    drawers = { drawn: 2, drawers: [] };
    await sync;
    expect(heard).toEqual(["one", "two"]);
    expect(follower.position).toBe(2);

    // Drawn and rolled back: passed once its transaction has ended, without delivering anything.
    drawers = { drawn: 4, drawers: ["t3"] };
    log.rows.push({ seq: 4, origin: "b", writes: "four" });
    const next = follower.sync();
    while (asked < 8) await new Promise((r) => setTimeout(r, 1));
    drawers = { drawn: 4, drawers: [] };
    await next;
    expect(heard).toEqual(["one", "two", "four"]);
  });

  it("fails the round with DATABASE_UNAVAILABLE when a drawer never ends, and keeps its cursor", async () => {
    const log = memoryLog();
    let drawers = { drawn: 0, drawers: [] as string[] };
    const follower = new CommitFollower({
      query: (sql, params) => log.query(sql, params),
      pollIntervalMs: 3_600_000,
      drawers: async () => drawers,
      maxSettleMs: 30,
    });
    followers.push(follower);
    await follower.start();
    drawers = { drawn: 2, drawers: ["stuck"] };
    log.rows.push({ seq: 2, origin: "b", writes: "two" });
    await expect(follower.sync()).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    expect(follower.position).toBe(0);
  });

  it("skips rows of its own origin read before their number was heard, but delivers a lost commit's row", async () => {
    const log = memoryLog();
    const follower = new CommitFollower({
      query: (sql, params) => log.query(sql, params),
      pollIntervalMs: 3_600_000,
      origin: "me",
    });
    followers.push(follower);
    await follower.start();
    const heard: (string | undefined)[] = [];
    follower.onExternalCommit((p) => heard.push(p));
    // 1: committed here, read before `drew(1)` ran. 2: its COMMIT's answer was lost (abandoned).
    follower.drew(2);
    follower.abandoned([2]);
    log.rows.push({ seq: 1, origin: "me", writes: "mine" }, { seq: 2, origin: "me", writes: "lost" });
    await follower.sync();
    expect(heard).toEqual(["lost"]);
    expect(follower.position).toBe(2);
  });
});
