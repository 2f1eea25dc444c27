/**
 * A switchover seen from the engine's pooled connections (issue 24): the old primary keeps
 * running and answering for a while (pg_auto_failover's `draining`/`demote_timeout`, or any
 * manager that makes it read-only before stopping it), while writes already go to the new one.
 * Connections opened before the switch must serve no further transaction: a read on one would
 * miss writes acknowledged through the new primary (and could accept a revoked session).
 *
 * Two plain servers stand in for the formation, on one multi-host URL: `old` starts as the
 * primary, `next` (read-only until the switch) already holds the newer data, written by an engine
 * of its own. The switch is made by hand, without a timing margin: `default_transaction_read_only`
 * on the old server and off on the new one, as pg_auto_failover does.
 *
 * The last case is an old primary nobody fenced (its failover agent dead or frozen): writable-looking,
 * it asks for a synchronous standby it no longer has. It must go on serving while no other host is a
 * primary (its standby merely died), and serve nothing once one is.
 */
import { describe, expect, it } from "vitest";
import { Catalog } from "../../../src/backend/db/catalog.ts";
import { defineSchema, defineTable } from "../../../src/backend/schema.ts";
import { PostgresEngine } from "../../../src/backend/storage/postgres/engine.ts";
import { v } from "../../../src/backend/values/index.ts";
import { postgresBinDir, runBin, type TestPostgres, usePostgres } from "../../helpers/postgres.ts";
import { startStandby } from "../../helpers/postgres-standby.ts";
import { eventually } from "../../helpers/wait.ts";
import { startInstances } from "../fixtures/instances.ts";

const schema = defineSchema({ notes: defineTable({ text: v.string() }) });
const catalog = new Catalog(schema);
let databases = 0;

/** Makes `server` refuse (`on`) or accept writes, for its open sessions too, and waits until it does. */
async function readOnly(server: TestPostgres, on: boolean): Promise<void> {
  await server.sql(`ALTER SYSTEM SET default_transaction_read_only = ${on ? "on" : "off"}`);
  await server.sql("SELECT pg_reload_conf()");
  // A new session sees the reloaded file once the postmaster read it (it signals the others then).
  await eventually(async () =>
    expect((await server.sql("SHOW default_transaction_read_only"))[0]).toEqual({
      default_transaction_read_only: on ? "on" : "off",
    }),
  );
}

const note = (n: number) => ({ _id: `n${n}`, _creationTime: n, text: `note ${n}` });

async function insert(engine: PostgresEngine, n: number): Promise<void> {
  const doc = note(n);
  await engine.write((tx) => tx.insert("notes", doc, catalog.keysOf("notes", doc)));
}

/** What `engine` reads, `parallel` reads at once (each on a pooled connection of its own). */
function readAll(engine: PostgresEngine, parallel: number): Promise<string[][]> {
  return Promise.all(
    Array.from({ length: parallel }, () =>
      engine.read(async (tx) => {
        const rows = await tx.scan({
          table: "notes",
          index: "by_creation_time",
          range: {},
          order: "asc",
          limit: 100,
        });
        return rows.map((row) => row.doc._id as string);
      }),
    ),
  );
}

/** The engine's transaction connections to `server`'s database (its pools' application name). */
async function connectionsTo(server: TestPostgres, database: string): Promise<number> {
  const rows = await server.sql(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name IN ('service-auth', 'service-auth-follower')",
    [database],
  );
  return rows[0].n;
}

describe.skipIf(!postgresBinDir)("a switchover with the old primary still answering", () => {
  const first = usePostgres();
  const second = usePostgres();

  /**
   * An engine on `old,next` holding open (idle, pooled) connections to `old`, where it wrote
   * note 1; `next` holds notes 1–3 and is read-only until the switch.
   */
  async function beforeTheSwitch() {
    const [old, next] = [first(), second()];
    await readOnly(next, false);
    await readOnly(old, false);
    const database = `switch_${process.pid}_${++databases}`;
    for (const server of [old, next]) await server.sql(`CREATE DATABASE "${database}"`);
    // The newer data, as the new primary will hold it.
    const newer = new PostgresEngine({
      connectionString: `postgres://postgres@127.0.0.1:${next.port}/${database}`,
    });
    await newer.migrate(catalog.layout(), catalog.keysOf);
    for (const n of [1, 2, 3]) await insert(newer, n);
    await newer.close();
    await readOnly(next, true);

    const url = `postgres://postgres@127.0.0.1:${old.port},127.0.0.1:${next.port}/${database}?target_session_attrs=read-write`;
    const engine = new PostgresEngine({ connectionString: url, connectTimeoutMs: 2000 });
    await engine.migrate(catalog.layout(), catalog.keysOf);
    await insert(engine, 1);
    // Several pooled connections to the old primary, idle from now on.
    expect(await readAll(engine, 4)).toEqual(Array(4).fill(["n1"]));
    expect(await connectionsTo(old, database)).toBeGreaterThanOrEqual(4);
    return { old, next, database, engine };
  }

  it("a read does not run on a pooled connection whose server turned read-only: it reads the new primary", async () => {
    const { old, next, engine } = await beforeTheSwitch();
    try {
      await readOnly(old, true);
      await readOnly(next, false);
      // Every read of these would take one of the pooled connections to the old server.
      expect(await readAll(engine, 4)).toEqual(Array(4).fill(["n1", "n2", "n3"]));
    } finally {
      await engine.close();
    }
  }, 60_000);

  it("once a write found the old primary read-only, its connections serve nothing more, even if it looks writable again", async () => {
    const { old, next, database, engine } = await beforeTheSwitch();
    try {
      await readOnly(old, true);
      await readOnly(next, false);
      // The write takes a pooled connection to the old server, is refused there (SQLSTATE 25006)
      // and runs on the new primary: acknowledged.
      await insert(engine, 4);
      expect(
        await next.sql(
          `SELECT count(*)::int AS n FROM t_notes`,
          [],
          `postgres://postgres@127.0.0.1:${next.port}/${database}`,
        ),
      ).toEqual([{ n: 4 }]);
      // The old primary looks like one again (not demoted yet, as in pg_auto_failover's
      // demote_timeout): only what the engine learned keeps its old connections out.
      await readOnly(old, false);
      expect(await readAll(engine, 4)).toEqual(Array(4).fill(["n1", "n2", "n3", "n4"]));
      // The idle ones were closed at once, not left in the pools.
      await eventually(async () => expect(await connectionsTo(old, database)).toBe(0));
    } finally {
      await engine.close();
    }
  }, 60_000);
  // Last: it leaves the first server stopped.
  it("an old primary in a smart shutdown (its sessions run on, new ones refused) serves nothing more once that is seen", async () => {
    const { old, next, engine } = await beforeTheSwitch();
    try {
      await readOnly(next, false);
      // Not fenced, not gone: the sessions open to it keep answering (pg_ctl's smart mode).
      runBin("pg_ctl", ["-D", old.dataDir, "-m", "smart", "-W", "stop"]);
      await eventually(async () => expect(old.sql("SELECT 1")).rejects.toMatchObject({ code: "57P03" }));
      // As many reads as the pool holds connections: some need a new one, and learn the primary moved.
      // Those already running on the old server may answer from it; none after them does.
      await Promise.allSettled(Array.from({ length: 10 }, () => readAll(engine, 1)));
      expect(await readAll(engine, 4)).toEqual(Array(4).fill(["n1", "n2", "n3"]));
    } finally {
      await engine.close();
    }
  }, 60_000);
});

describe.skipIf(!postgresBinDir)("a revocation across a switchover to a streaming standby", () => {
  const primary = usePostgres(["synchronous_commit=on"]);

  it("an instance holding pooled connections to the fenced old primary refuses a session revoked through the new one", async () => {
    const databaseUrl = await primary().createDatabase();
    const standby = await startStandby(primary());
    const database = new URL(databaseUrl).pathname.slice(1);
    const url = `postgres://postgres@127.0.0.1:${primary().port},127.0.0.1:${standby.port}/${database}?target_session_attrs=read-write`;
    const instances = await startInstances(2, url, { connectTimeoutMs: 2000 });
    try {
      const { sessionId, token } = await instances.newSession();
      // Cached by both instances, each with pooled connections to the old primary.
      for (const i of [0, 1]) {
        for (let call = 0; call < 2; call++) expect((await instances.whoami(i, token)).status).toBe(200);
      }
      await standby.caughtUp();
      // The switch: the old primary fenced (still running, its sessions open), the standby promoted.
      await readOnly(primary(), true);
      await standby.sql("SELECT pg_promote()");
      const revoked = await instances.revoke(1, sessionId);
      expect(`${revoked.status} ${revoked.body?.code ?? ""}`).toBe("200 ");
      // Acknowledged: from now on no instance may accept the token.
      for (const i of [0, 1]) expect((await instances.whoami(i, token)).status, `instance ${i}`).toBe(401);
    } finally {
      await instances.close();
      await standby.stop();
    }
  }, 120_000);
});

// Not fenced at all (its failover agent dead or frozen): the old primary stays writable-looking, but
// it asks for a synchronous standby it no longer has (primary-locator.ts, "degraded").
describe.skipIf(!postgresBinDir)("a switchover that leaves the old primary unfenced", () => {
  const primary = usePostgres(["synchronous_commit=on"]);

  it("reads go on while it lacks its standby and no other host took over; once one has, a revoked session is refused", async () => {
    const databaseUrl = await primary().createDatabase();
    const standby = await startStandby(primary());
    const database = new URL(databaseUrl).pathname.slice(1);
    const url = `postgres://postgres@127.0.0.1:${primary().port},127.0.0.1:${standby.port}/${database}?target_session_attrs=read-write`;
    const instances = await startInstances(2, url, { connectTimeoutMs: 2000 });
    let next: Awaited<ReturnType<typeof startInstances>> | undefined;
    try {
      const { sessionId, token } = await instances.newSession();
      for (const i of [0, 1]) {
        for (let call = 0; call < 2; call++) expect((await instances.whoami(i, token)).status).toBe(200);
      }
      await standby.caughtUp();
      // The primary now waits for a synchronous standby that is not there (none has that name).
      await primary().sql("ALTER SYSTEM SET synchronous_standby_names = 'nobody'");
      await primary().sql("SELECT pg_reload_conf()");
      await eventually(async () =>
        expect((await primary().sql("SHOW synchronous_standby_names"))[0]).toEqual({
          synchronous_standby_names: "nobody",
        }),
      );
      // No other host is a primary (the standby is in recovery): it still is the primary, reads go on.
      for (const i of [0, 1]) expect((await instances.whoami(i, token)).status, `instance ${i}`).toBe(200);
      // The standby promoted, the old primary left running and writable-looking.
      await standby.sql("SELECT pg_promote()");
      next = await startInstances(1, standby.urlOf(databaseUrl), { connectTimeoutMs: 2000 });
      const revoked = await next.revoke(0, sessionId);
      expect(`${revoked.status} ${revoked.body?.code ?? ""}`).toBe("200 ");
      // Acknowledged by the new primary: the instances pooling connections to the old one refuse it.
      for (const i of [0, 1]) expect((await instances.whoami(i, token)).status, `instance ${i}`).toBe(401);
    } finally {
      await next?.close();
      await instances.close();
      await standby.stop();
    }
  }, 120_000);
});
