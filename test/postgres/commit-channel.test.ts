/**
 * The commit channel's publishing (postgres/notify.ts): notifications published in the same turn
 * of the event loop, while a statement is on its way, or within 20 ms of a statement that carried
 * several go out together — every NOTIFY statement wakes every instance's LISTEN connection — and
 * batching loses, reorders or echoes none of them. Commits made one after another are not held
 * back, nor a stream that fills whole statements; what waits is bounded.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { CommitChannel, MAX_BATCH, MAX_OUTBOX } from "../../src/backend/storage/postgres/notify.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

describe.skipIf(!postgresBinDir)("commit channel publishing", () => {
  const server = usePostgres();
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** A channel on `url` publishing through a pool whose statements are counted. */
  async function channel(url: string, name: string) {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const statements: string[] = [];
    /** When each statement was sent (performance.now()), and how many messages it carried. */
    const sentAt: number[] = [];
    /** When each statement was answered. */
    const answeredAt: number[] = [];
    const carried: number[] = [];
    /** Statements wait for this before they go out (a test holds them back by replacing it). */
    const gate = { open: Promise.resolve() };
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: typeof query }).query = async (...args: unknown[]) => {
      statements.push(String(args[0]));
      sentAt.push(performance.now());
      carried.push((args[1] as [string, string[]])[1].length);
      await gate.open;
      try {
        return await query(...args);
      } finally {
        answeredAt.push(performance.now());
      }
    };
    const heard: { seq: number; payload: string | undefined }[] = [];
    const commits = new CommitChannel({
      connection: { connectionString: url },
      pool,
      channel: name,
      onHint: (seq, payload) => heard.push({ seq, payload }),
      onListening: () => {},
    });
    closing.push(async () => {
      await commits.close();
      await pool.end();
    });
    await commits.start();
    return { commits, statements, sentAt, answeredAt, carried, heard, gate };
  }

  /** A publishing channel and a listening one on a fresh database. */
  async function pair(name: string) {
    const url = await server().createDatabase();
    const a = await channel(url, name);
    const b = await channel(url, name);
    return { a, b };
  }

  it("a burst in one turn goes out in one statement per 256 messages; every message arrives once, in order, not echoed", async () => {
    const { a, b } = await pair("burst");
    const burst = 2 * MAX_BATCH + 100;
    for (let seq = 1; seq <= burst; seq++) a.commits.publish(seq, `{"n":${seq}}`);
    await eventually(() => expect(b.heard).toHaveLength(burst), 20_000);
    expect(b.heard.map((h) => h.seq)).toEqual(Array.from({ length: burst }, (_, i) => i + 1));
    expect(b.heard[burst - 1]).toEqual({ seq: burst, payload: `{"n":${burst}}` });
    // 612 messages, at most 256 per statement: 3 statements, not 612.
    expect(a.carried).toEqual([MAX_BATCH, MAX_BATCH, 100]);
    // Its own messages are not handed back to the publisher.
    expect(a.heard).toEqual([]);

    // Published while a statement is on its way, and after the outbox drained: still delivered.
    a.commits.publish(burst + 1, "x");
    await new Promise((resolve) => setImmediate(resolve));
    a.commits.publish(burst + 2, "y");
    await eventually(() => expect(b.heard).toHaveLength(burst + 2), 20_000);
    a.commits.publish(burst + 3, "z");
    await eventually(
      () => expect(b.heard.map((h) => h.seq).slice(burst)).toEqual([burst + 1, burst + 2, burst + 3]),
      20_000,
    );
  }, 60_000);

  it("a steady stream goes out at most one statement per 20 ms once they carry several, losing and reordering nothing", async () => {
    const { a, b } = await pair("stream");
    // The publisher's connection made first: its first statement's wait must not swallow the stream.
    a.commits.publish(1, "first");
    await eventually(() => expect(b.heard).toHaveLength(1), 20_000);
    // Five commits a turn, a turn a millisecond or more, as a loaded instance answers them, until a
    // statement of several messages went out and two more after it (the stream then outlasts an
    // interval); far fewer than the outbox holds.
    const severalThenTwo = () => {
      const several = a.carried.findIndex((n) => n > 1);
      return several >= 0 && a.carried.length >= several + 3;
    };
    let seq = 1;
    while (!severalThenTwo() && seq < MAX_OUTBOX / 2) {
      for (let i = 0; i < 5; i++) a.commits.publish(++seq, `{"n":${seq}}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await eventually(() => expect(b.heard).toHaveLength(seq), 20_000);
    expect(b.heard.map((h) => h.seq)).toEqual(Array.from({ length: seq }, (_, i) => i + 1));
    expect(a.sentAt.length).toBeLessThan(seq / 2);
    // After a statement of several messages the next waited the interval: the channel checks the
    // real clock before each statement (a lower bound: load only widens gaps).
    expect(a.carried.slice(0, -1).some((n) => n > 1)).toBe(true);
    for (let i = 1; i < a.sentAt.length; i++)
      if (a.carried[i - 1] > 1 && a.carried[i - 1] < MAX_BATCH)
        expect(a.sentAt[i] - a.sentAt[i - 1]).toBeGreaterThanOrEqual(19.9);
  }, 60_000);

  it("a stream that fills whole statements is not held back: a full statement's successor goes out once it is answered", async () => {
    const { a, b } = await pair("full");
    // Statements held until the whole stream waits: then every one but the last goes out full.
    let release!: () => void;
    a.gate.open = new Promise((resolve) => (release = resolve));
    const total = 8 * MAX_BATCH + 10;
    for (let seq = 1; seq <= total; seq++) {
      a.commits.publish(seq, `{"n":${seq}}`);
      if (seq % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    release();
    await eventually(() => expect(b.heard).toHaveLength(total), 20_000);
    expect(b.heard.map((h) => h.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const full = a.carried.flatMap((n, i) => (n === MAX_BATCH && i + 1 < a.carried.length ? [i] : []));
    expect(full.length).toBeGreaterThanOrEqual(7);
    // Had a full statement waited the interval after it was sent, its successor would go out 20 ms
    // later at the earliest; it goes out a turn of the event loop after the answer instead (the
    // least over several, so one slow turn on a loaded machine does not decide it).
    const afterAnswer = full.map((i) => a.sentAt[i + 1] - a.answeredAt[i]);
    expect(Math.min(...afterAnswer)).toBeLessThan(19.9);
    expect(Math.min(...full.map((i) => a.sentAt[i + 1] - a.sentAt[i]))).toBeLessThan(19.9);
  }, 60_000);

  it("what waits to be sent is bounded: past the bound commits are not announced, the rest arrive in order", async () => {
    const { a, b } = await pair("bounded");
    let release!: () => void;
    a.gate.open = new Promise((resolve) => (release = resolve));
    const total = MAX_OUTBOX + 1000;
    // All in one turn: the first statement takes its batch only in the next.
    for (let seq = 1; seq <= total; seq++) a.commits.publish(seq, `{"n":${seq}}`);
    release();
    await eventually(() => expect(b.heard).toHaveLength(MAX_OUTBOX), 20_000);
    expect(b.heard.map((h) => h.seq)).toEqual(Array.from({ length: MAX_OUTBOX }, (_, i) => i + 1));
    expect(a.carried.reduce((sum, n) => sum + n, 0)).toBe(MAX_OUTBOX);
    // Once there is room again, commits are announced as before.
    a.commits.publish(total + 1, "after");
    await eventually(() => expect(b.heard.at(-1)).toEqual({ seq: total + 1, payload: "after" }), 20_000);
  }, 60_000);

  it("commits made one after another go out one statement each, none held back for the interval", async () => {
    const { a, b } = await pair("sequential");
    // A client that waits for each update before its next write, as a chat's sender does.
    for (let seq = 1; seq <= 20; seq++) {
      a.commits.publish(seq, `{"n":${seq}}`);
      // Every turn of the event loop, not a polling interval: the next write follows at once.
      while (b.heard.length < seq) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(a.carried).toEqual(Array.from({ length: 20 }, () => 1));
    // Had every statement waited 20 ms after the previous one, no gap would be shorter; a round
    // trip through PostgreSQL and the other listener is far shorter even on a loaded machine.
    const gaps = a.sentAt.slice(1).map((t, i) => t - a.sentAt[i]);
    expect(Math.min(...gaps)).toBeLessThan(19.9);
  }, 60_000);

  it("close() waits for the notifications being sent (a CLI's last write is announced)", async () => {
    const url = await server().createDatabase();
    const b = await channel(url, "closing");
    const a = await channel(url, "closing");
    for (let seq = 1; seq <= 10; seq++) a.commits.publish(seq, "*");
    await a.commits.close();
    await eventually(
      () => expect(b.heard.map((h) => h.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
      20_000,
    );
    // The payload marker `*` means "not carried": the listener reads the log instead.
    expect(b.heard[0].payload).toBeUndefined();
  }, 60_000);
});
