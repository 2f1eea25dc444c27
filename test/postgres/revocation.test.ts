/**
 * Revocation across instances is "next request": once the response that revoked a session has
 * returned, no instance answers 200 for it — even with every identity cache warm, and whatever
 * happened to the notification that announced the revocation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { type Instances, startInstances } from "./fixtures/instances.ts";

describe.skipIf(!postgresBinDir)("revocation across three instances", () => {
  const server = usePostgres();
  let instances: Instances;

  beforeAll(async () => {
    instances = await startInstances(3, await server().createDatabase());
  });
  afterAll(async () => {
    await instances?.close();
  });

  it("answers 401 on every other instance right after the revoke returned, 100 times out of 100", async () => {
    const stale: string[] = [];
    for (let round = 0; round < 100; round++) {
      const { sessionId, token } = await instances.newSession();
      // Warm every instance's identity cache: the second call of a token is served from it.
      for (const i of [1, 2]) {
        for (let call = 0; call < 2; call++) expect((await instances.whoami(i, token)).status).toBe(200);
      }
      const revoked = await instances.revoke(0, sessionId);
      expect(revoked.status).toBe(200);
      const [b, c] = await Promise.all([instances.whoami(1, token), instances.whoami(2, token)]);
      if (b.status !== 401) stale.push(`round ${round}: B answered ${b.status}`);
      if (c.status !== 401) stale.push(`round ${round}: C answered ${c.status}`);
    }
    expect(stale).toEqual([]);
  }, 120_000);
});
