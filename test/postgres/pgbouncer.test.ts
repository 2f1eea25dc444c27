/**
 * Two instances through PgBouncer in transaction mode (`DATABASE_POOLER=transaction`): no named
 * prepared statements (each transaction may land on another server connection), LISTEN on a
 * direct connection (`DATABASE_LISTEN_URL`), and cross-instance delivery and revocation intact.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresSettings } from "../../src/backend/storage/open.ts";
import type { BackendClient } from "../../src/client/index.ts";
import { pgbouncerInstalled, startPgBouncer, type TestPgBouncer } from "../helpers/pgbouncer.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { commitChannel, type Instances, liveChannel, post, startInstances } from "./fixtures/instances.ts";

describe.skipIf(!postgresBinDir || !pgbouncerInstalled)(
  "two instances through PgBouncer (transaction mode)",
  () => {
    const server = usePostgres();
    let bouncer: TestPgBouncer;
    let instances: Instances;
    const clients: BackendClient[] = [];

    beforeAll(async () => {
      bouncer = await startPgBouncer(server().port);
      const direct = await server().createDatabase();
      const pooled = direct.replace(`:${server().port}/`, `:${bouncer.port}/`);
      const { connectionString: _, ...settings } = postgresSettings(pooled, {
        DATABASE_POOLER: "transaction",
        DATABASE_LISTEN_URL: direct,
      });
      expect(settings).toMatchObject({ pooler: "transaction", notify: true, listenConnectionString: direct });
      instances = await startInstances(2, pooled, settings);
    }, 60_000);
    afterAll(async () => {
      for (const c of clients.splice(0)) c.close();
      await instances?.close();
      await bouncer?.stop();
    });

    it("start, serve, deliver live updates and refuse a revoked session on the other instance", async () => {
      const [a, b] = instances.services;
      expect(await commitChannel(b)).toBe("listening");
      const live = liveChannel(b, "pooled", clients);
      await live.ready();
      // Enough statements to pass through every server connection of the pool several times.
      for (let i = 0; i < 20; i++) await post(a, "pooled", `m${i}`);
      await live.sees("m19");

      const { sessionId, token } = await instances.newSession();
      for (let call = 0; call < 2; call++) expect((await instances.whoami(1, token)).status).toBe(200);
      expect((await instances.revoke(0, sessionId)).status).toBe(200);
      expect((await instances.whoami(1, token)).status).toBe(401);
    }, 30_000);
  },
);
