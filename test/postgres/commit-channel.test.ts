/**
 * The commit channel's publishing (postgres/notify.ts): notifications published in the same turn
 * of the event loop, while a statement is on its way, or within 20 ms of a statement that carried
 * several go out together — every NOTIFY statement wakes every instance's LISTEN connection — and
 * batching loses, reorders or echoes none of them. Commits made one after another are not held back.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { CommitChannel } from "../../src/backend/storage/postgres/notify.ts";
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
    const carried: number[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: typeof query }).query = (...args: unknown[]) => {
      statements.push(String(args[0]));
      sentAt.push(performance.now());
      carried.push((args[1] as [string, string[]])[1].length);
      return query(...args);
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
    return { commits, statements, sentAt, carried, heard };
  }

  /** A publishing channel and a listening one on a fresh database. */
  async function pair(name: string) {
    const url = await server().createDatabase();
    const a = await channel(url, name);
    const b = await channel(url, name);
    return { a, b };
  }

  it("a burst in one turn goes out in one statement per 64 messages; every message arrives once, in order, not echoed", async () => {
    const { a, b } = await pair("burst");
    for (let seq = 1; seq <= 150; seq++) a.commits.publish(seq, `{"n":${seq}}`);
    await eventually(() => expect(b.heard).toHaveLength(150), 20_000);
    expect(b.heard.map((h) => h.seq)).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    expect(b.heard[149]).toEqual({ seq: 150, payload: '{"n":150}' });
    // 150 messages, at most 64 per statement: 3 statements, not 150.
    expect(a.statements).toHaveLength(3);
    // Its own messages are not handed back to the publisher.
    expect(a.heard).toEqual([]);

    // Published while a statement is on its way, and after the outbox drained: still delivered.
    a.commits.publish(151, "x");
    await new Promise((resolve) => setImmediate(resolve));
    a.commits.publish(152, "y");
    await eventually(() => expect(b.heard).toHaveLength(152), 20_000);
    a.commits.publish(153, "z");
    await eventually(() => expect(b.heard.map((h) => h.seq).slice(150)).toEqual([151, 152, 153]), 20_000);
  }, 60_000);

  it("a steady stream goes out at most one statement per 20 ms once they carry several, losing and reordering nothing", async () => {
    const { a, b } = await pair("stream");
    // One commit per turn of the event loop, as a loaded instance answers them.
    for (let seq = 1; seq <= 200; seq++) {
      a.commits.publish(seq, `{"n":${seq}}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await eventually(() => expect(b.heard).toHaveLength(200), 20_000);
    expect(b.heard.map((h) => h.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(a.sentAt.length).toBeLessThan(200);
    // After a statement of several messages the next waited the interval: the channel checks the
    // real clock before each statement (a lower bound: load only widens gaps).
    expect(a.carried.slice(0, -1).some((n) => n > 1)).toBe(true);
    for (let i = 1; i < a.sentAt.length; i++)
      if (a.carried[i - 1] > 1) expect(a.sentAt[i] - a.sentAt[i - 1]).toBeGreaterThanOrEqual(19.9);
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
