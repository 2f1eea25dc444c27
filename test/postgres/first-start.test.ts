/**
 * A safe first start: instances (and `env sync --auth`) started at the same moment on an empty
 * PostgreSQL database each find the development secret and signing keys missing and generate
 * them. Storing them is insert-if-absent in one transaction, so all of them end up with the one
 * secret and the one key set that won, and sign-up works through every instance (before, two could
 * store different secrets, and a third a key set encrypted with the losing one: sign-up 500).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { runCli } from "../helpers/process.ts";

const ROUNDS = 10;
const apps: ExampleApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

describe.skipIf(!postgresBinDir)("simultaneous first start on an empty PostgreSQL database", () => {
  const postgres = usePostgres();

  it(`agrees on one secret and one key set, ${ROUNDS} rounds of 3 instances at once`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const databaseUrl = await postgres().createDatabase();
      apps.push(...(await Promise.all([1, 2, 3].map(() => startExampleApp({ databaseUrl })))));
      const secrets = new Set(apps.map((a) => a.backend.env.get("SERVICE_AUTH_SECRET")));
      const keySets = new Set(apps.map((a) => a.backend.env.get("JWKS")));
      expect(secrets.size).toBe(1);
      expect(keySets.size).toBe(1);
      for (const [i, app] of apps.entries()) {
        const { token } = await app.signUp(`user${i}@example.com`);
        const me = await app.call("query", "users:me", {}, token);
        expect(me.status).toBe(200);
      }
      await Promise.all(apps.splice(0).map((a) => a.close()));
    }
  }, 300_000);

  it("agrees with two `env sync --auth` runs started beside the instances", async () => {
    const databaseUrl = await postgres().createDatabase();
    const [cliA, cliB, ...started] = await Promise.all([
      runCli(["env", "sync", "--auth"], { env: { DATABASE_URL: databaseUrl } }),
      runCli(["env", "sync", "--auth"], { env: { DATABASE_URL: databaseUrl } }),
      startExampleApp({ databaseUrl }),
      startExampleApp({ databaseUrl }),
    ]);
    apps.push(...started);
    expect([cliA.code, cliB.code]).toEqual([0, 0]);
    // The CLIs ran in other processes: the instances hear of their writes through the commit log.
    const agreed = () => {
      const secrets = new Set(apps.map((a) => a.backend.env.get("SERVICE_AUTH_SECRET")));
      const keySets = new Set(apps.map((a) => a.backend.env.get("JWKS")));
      expect([secrets.size, keySets.size]).toEqual([1, 1]);
    };
    agreed();
    for (const [i, app] of apps.entries()) {
      const { token } = await app.signUp(`cli${i}@example.com`);
      expect((await app.call("query", "users:me", {}, token)).status).toBe(200);
    }
  }, 120_000);
});
