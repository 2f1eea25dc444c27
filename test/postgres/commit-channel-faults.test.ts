/**
 * NOTIFY is only a wake-up: with notifications that cannot be sent, a LISTEN connection that
 * stops answering, notifications switched off, or a change made with SQL behind the engine's
 * back, a revoked session is still refused everywhere and live updates still arrive (the commit
 * log, read by each request that trusts a cached identity and polled in the background).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Commit } from "../../src/backend/db/read-write-sets.ts";
import { PRUNE_SQL } from "../../src/backend/storage/commit-log/log.ts";
import type { BackendClient } from "../../src/client/index.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { eventually } from "../helpers/wait.ts";
import { commitChannel, type Instances, liveChannel, post, startInstances } from "./fixtures/instances.ts";

describe.skipIf(!postgresBinDir)("cross-instance delivery without working notifications", () => {
  const server = usePostgres();
  const clients: BackendClient[] = [];
  const running: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const r of running.splice(0).reverse()) await r.close();
  });

  async function start(...args: Parameters<typeof startInstances>): Promise<Instances> {
    const instances = await startInstances(...args);
    running.push(instances);
    return instances;
  }

  /** Revokes a session warm in instance 1's cache through instance 0; instance 1 must refuse it. */
  async function expectRevocationRefused(instances: Instances): Promise<void> {
    const { sessionId, token } = await instances.newSession();
    for (let call = 0; call < 2; call++) expect((await instances.whoami(1, token)).status).toBe(200);
    expect((await instances.revoke(0, sessionId)).status).toBe(200);
    expect((await instances.whoami(1, token)).status).toBe(401);
  }

  it("an app role that may not NOTIFY: revocation refused everywhere, live updates by catch-up", async () => {
    const url = await server().createDatabase();
    const db = new URL(url).pathname.slice(1);
    await server().sql(`CREATE ROLE "${db}_app" LOGIN`);
    await server().sql(`ALTER DATABASE "${db}" OWNER TO "${db}_app"`);
    await server().sql("REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC", [], url);
    const appUrl = url.replace("postgres@", `${db}_app@`);
    await expect(server().sql("SELECT pg_notify('x', 'y')", [], appUrl)).rejects.toThrow(/permission denied/);

    const instances = await start(2, appUrl);
    const [a, b] = instances.services;
    await expectRevocationRefused(instances);
    const live = liveChannel(b, "no-notify", clients);
    await live.ready();
    await post(a, "no-notify", "found by polling");
    await live.sees("found by polling");
    // The LISTEN connection itself is fine: only sending fails.
    expect(await commitChannel(b)).toBe("listening");
  }, 30_000);

  it("a stalled LISTEN connection: the heartbeat notices, /healthz says so, delivery goes on, and it reconnects", async () => {
    const url = await server().createDatabase();
    const proxy: TcpProxy = await startTcpProxy(server().port);
    running.push(proxy);
    const listenUrl = url.replace(`:${server().port}/`, `:${proxy.port}/`);
    const instances = await start(2, url, (i) =>
      i === 1 ? { listenConnectionString: listenUrl, heartbeatMs: 100 } : {},
    );
    const [a, b] = instances.services;
    expect(await commitChannel(b)).toBe("listening");
    const live = liveChannel(b, "stalled", clients);
    await live.ready();

    proxy.stall();
    await eventually(async () => expect(await commitChannel(b)).toBe("reconnecting"));
    await post(a, "stalled", "while stalled");
    await live.sees("while stalled");
    await expectRevocationRefused(instances);

    proxy.resume();
    await eventually(async () => expect(await commitChannel(b)).toBe("listening"));
    await post(a, "stalled", "after resuming");
    await live.sees("after resuming");
  }, 60_000);

  it("DATABASE_NOTIFY=off: no LISTEN connection; commits reach other instances by polling the log", async () => {
    const url = await server().createDatabase();
    const instances = await start(2, url, { notify: false });
    const [a, b] = instances.services;
    const listeners = await server().sql(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'service-auth-listen-%'",
      [new URL(url).pathname.slice(1)],
    );
    expect(listeners).toEqual([{ n: 0 }]);
    expect(await commitChannel(b)).toBe("polling");
    const live = liveChannel(b, "polled", clients);
    await live.ready();
    await post(a, "polled", "by polling");
    await live.sees("by polling");
    await expectRevocationRefused(instances);
  }, 30_000);

  it("notices a session deleted with SQL behind the engine's back, and logs nothing for the engine's own writes", async () => {
    const url = await server().createDatabase();
    const instances = await start(2, url);
    const { sessionId, token } = await instances.newSession();
    for (const i of [0, 1]) {
      for (let call = 0; call < 2; call++) expect((await instances.whoami(i, token)).status).toBe(200);
    }
    expect(
      await server().sql(`SELECT count(*)::int AS n FROM _commit_log WHERE origin = 'sql'`, [], url),
    ).toEqual([{ n: 0 }]);

    await server().sql("DELETE FROM t_sessions WHERE id = $1", [sessionId], url);
    for (const i of [0, 1]) expect((await instances.whoami(i, token)).status).toBe(401);
    expect(
      await server().sql(`SELECT origin, writes FROM _commit_log WHERE origin = 'sql'`, [], url),
    ).toEqual([{ origin: "sql", writes: null }]);
  }, 30_000);

  it("an instance that fell behind further than the kept log re-checks everything", async () => {
    const url = await server().createDatabase();
    // Instance 1 polls rarely and listens to nothing: it learns only when it syncs.
    const instances = await start(2, url, (i) => (i === 1 ? { notify: false, pollIntervalMs: 600_000 } : {}));
    const [a, b] = instances.services;
    const heard: Commit[] = [];
    // The app's commits: the instances' own bookkeeping (presence heartbeats in system tables)
    // may land in between, whenever its timer fires.
    b.backend.onCommit((c) => {
      if (c.unknown || c.writes.some((w) => !w.table.startsWith("_"))) heard.push(c);
    });
    for (let i = 0; i < 5; i++) await post(a, "behind", `m${i}`);
    await server().sql(PRUNE_SQL, [2], url);
    await b.backend.engine.syncExternalCommits?.();
    expect(heard.map((c) => c.unknown)).toEqual([true]);

    // Caught up again: the next commit arrives with its exact write set.
    await post(a, "behind", "exact");
    await b.backend.engine.syncExternalCommits?.();
    expect(heard).toHaveLength(2);
    expect(heard[1].writes.map((w) => w.after?.body)).toEqual(["exact"]);
  }, 30_000);
});
