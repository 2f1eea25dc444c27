/**
 * A streaming hot standby of a test PostgreSQL server (`postgres.ts`): `pg_basebackup -R` into a
 * temp dir (the backup writes `standby.signal` and `primary_conninfo`), started on a free loopback
 * port, replaying what the primary streams. Tests pause and resume its replay and set
 * `recovery_min_apply_delay`, the two kinds of lag a read replica must survive without answering
 * from a stale snapshot.
 */
import { join } from "node:path";
import pg from "pg";
import { chownToPostgres, runBin, startServerAt, type TestPostgres } from "./postgres.ts";
import { tempDir } from "./temp.ts";
import { eventually } from "./wait.ts";

export interface TestStandby {
  port: number;
  /** The standby's URL of the primary's database `url` (same name, the standby's address). */
  urlOf(primaryDatabaseUrl: string): string;
  /** Runs one statement on the standby (maintenance database unless `url`). */
  sql<R extends pg.QueryResultRow = any>(text: string, values?: unknown[], url?: string): Promise<R[]>;
  /** Stops applying WAL (`pg_wal_replay_pause()`); resolves once replay is paused. */
  pauseReplay(): Promise<void>;
  /** Applies WAL again. */
  resumeReplay(): Promise<void>;
  /** Sets `recovery_min_apply_delay` (`0` for none) and reloads the configuration. */
  applyDelay(delay: string): Promise<void>;
  /** Resolves once the standby has replayed everything the primary had written when called. */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

/** Makes a hot standby of `primary` and starts it; resolves once it streams from the primary. */
export async function startStandby(primary: TestPostgres, settings: string[] = []): Promise<TestStandby> {
  const dir = tempDir("service-auth-pg-standby-");
  chownToPostgres(dir);
  const data = join(dir, "data");
  runBin("pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(primary.port),
    "-U",
    "postgres",
    "-D",
    data,
    "-R",
    "-X",
    "stream",
    "-c",
    "fast",
    "--no-sync",
  ]);
  const server = await startServerAt(dir, data, ["hot_standby=on", ...settings]);
  const maintenance = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
  const sql = async (text: string, values: unknown[] = [], url = maintenance) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  await eventually(async () => {
    const [receiver] = await sql("SELECT status FROM pg_stat_wal_receiver");
    if (receiver?.status !== "streaming") throw new Error(`standby not streaming yet (${receiver?.status})`);
  });
  return {
    port: server.port,
    urlOf(primaryDatabaseUrl) {
      const url = new URL(primaryDatabaseUrl);
      url.port = String(server.port);
      return url.toString();
    },
    sql,
    async pauseReplay() {
      await sql("SELECT pg_wal_replay_pause()");
      await eventually(async () => {
        const [{ state }] = await sql("SELECT pg_get_wal_replay_pause_state() AS state");
        if (state !== "paused") throw new Error(`replay ${state}`);
      });
    },
    async resumeReplay() {
      await sql("SELECT pg_wal_replay_resume()");
    },
    async applyDelay(delay) {
      await sql(`ALTER SYSTEM SET recovery_min_apply_delay = '${delay.replace(/'/g, "")}'`);
      await sql("SELECT pg_reload_conf()");
      await eventually(async () => {
        const [{ setting }] = await sql("SELECT current_setting('recovery_min_apply_delay') AS setting");
        if (setting !== delay) throw new Error(`recovery_min_apply_delay is ${setting}, not yet ${delay}`);
      });
    },
    async caughtUp() {
      const [{ lsn }] = await primary.sql("SELECT pg_current_wal_insert_lsn()::text AS lsn");
      await eventually(async () => {
        const [{ replayed }] = await sql("SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS replayed", [lsn]);
        if (!replayed) throw new Error(`standby has not replayed ${lsn} yet`);
      });
    },
    async stop() {
      server.stopSync();
    },
  };
}
