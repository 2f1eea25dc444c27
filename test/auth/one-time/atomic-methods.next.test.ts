/**
 * Better Auth 1.7's `consumeOne` and `incrementOne` on both adapters under concurrency (issue 45),
 * native here (each one data operation, one transaction): 20 parallel consumers of one
 * verification row, exactly one gets it; 20 parallel guarded decrements of a counter at 5, exactly
 * 5 succeed and it ends at 0; 20 unguarded increments all count. On SQLite, and on PostgreSQL with
 * the calls spread over two backends on one database. Runs on the newest patched line only.
 */
import type { BetterAuthOptions } from "better-auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpAdapter } from "../../../src/auth/adapter.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import { PostgresEngine } from "../../../src/backend/storage/postgres/engine.ts";
import { postgresBinDir, startPostgres, type TestPostgres } from "../../helpers/postgres.ts";
import { startTestBackend } from "../../helpers/service.ts";
import { authFunctions, directAdapterThroughFunctions, modulesFor } from "../fixtures/adapter-harness.ts";

const TIMEOUT = 60_000;
// The rate limiter's table gives a numeric counter to count on.
const options: BetterAuthOptions = { rateLimit: { storage: "database" } };
const schema = defineSchema(defineAuthTables(options));
const modules = modulesFor(schema);

type AnyAdapter = Record<string, (args: any) => Promise<any>>;
type AdapterOn = (backend: BackendRuntime) => Promise<AnyAdapter>;

const ADAPTERS: [string, AdapterOn][] = [
  ["direct adapter", async (backend) => directAdapterThroughFunctions(backend, options, schema) as any],
  [
    "httpAdapter",
    async (backend) =>
      httpAdapter(await backend.actionCtx({ allowInternal: true }), { authFunctions, schema })(
        options,
      ) as any,
  ],
];

let pg: TestPostgres | undefined;
const engines: [string, () => Promise<BackendRuntime[]>][] = [
  ["SQLite", async () => [await startTestBackend({ schema, modules })]],
];
if (postgresBinDir)
  engines.push([
    "PostgreSQL, two backends",
    async () => {
      pg ??= await startPostgres();
      const connectionString = await pg.createDatabase();
      const backends: BackendRuntime[] = [];
      for (let i = 0; i < 2; i++) {
        const backend = new BackendRuntime({
          schema,
          modules,
          engine: new PostgresEngine({ connectionString }),
        });
        await backend.start();
        backends.push(backend);
      }
      return backends;
    },
  ]);
afterAll(async () => {
  await pg?.stop();
});

describe.each(engines)("consumeOne / incrementOne under concurrency: %s", (_name, start) => {
  let backends: BackendRuntime[] = [];
  beforeAll(async () => {
    backends = await start();
  });
  afterAll(async () => {
    for (const b of backends) await b.close();
  });

  for (const [adapterName, adapterOn] of ADAPTERS) {
    /** One adapter per backend; call `i` goes to backend `i mod n`. */
    const adapters = async () => Promise.all(backends.map(adapterOn));

    it(
      `${adapterName}: 20 parallel consumeOne of one row, exactly one gets it`,
      async () => {
        const all = await adapters();
        const identifier = `consume-${adapterName}-${Math.random()}`;
        const row = await all[0]!.create!({
          model: "verification",
          data: { identifier, value: "v", expiresAt: new Date(Date.now() + 60_000) },
        });
        const got = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            all[i % all.length]!.consumeOne!({
              model: "verification",
              where: [{ field: "identifier", value: identifier }],
            }),
          ),
        );
        const winners = got.filter((g) => g !== null);
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ id: row.id, identifier, value: "v" });
        expect(winners[0].expiresAt).toBeInstanceOf(Date);
        expect(
          await all[0]!.findOne!({ model: "verification", where: [{ field: "id", value: row.id }] }),
        ).toBeNull();
      },
      TIMEOUT,
    );

    it(
      `${adapterName}: a guarded decrement run 20 times in parallel on 5 succeeds 5 times`,
      async () => {
        const all = await adapters();
        const identifier = `count-${adapterName}-${Math.random()}`;
        // A numeric counter of an auth table: the rate limiter's row.
        const row = await all[0]!.create!({
          model: "rateLimit",
          data: { key: identifier, count: 5, lastRequest: 0 },
        });
        const got = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            all[i % all.length]!.incrementOne!({
              model: "rateLimit",
              where: [
                { field: "key", value: identifier },
                { field: "count", operator: "gt", value: 0 },
              ],
              increment: { count: -1 },
              set: { lastRequest: i + 1 },
            }),
          ),
        );
        expect(got.filter((g) => g !== null)).toHaveLength(5);
        expect(
          got
            .filter((g) => g !== null)
            .map((g) => g.count)
            .sort(),
        ).toEqual([0, 1, 2, 3, 4]);
        const final = await all[0]!.findOne!({ model: "rateLimit", where: [{ field: "id", value: row.id }] });
        expect(final.count).toBe(0);
      },
      TIMEOUT,
    );

    it(
      `${adapterName}: 20 parallel increments all count`,
      async () => {
        const all = await adapters();
        const key = `sum-${adapterName}-${Math.random()}`;
        await all[0]!.create!({ model: "rateLimit", data: { key, count: 0, lastRequest: 0 } });
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            all[i % all.length]!.incrementOne!({
              model: "rateLimit",
              where: [{ field: "key", value: key }],
              increment: { count: 1 },
            }),
          ),
        );
        const final = await all[0]!.findOne!({ model: "rateLimit", where: [{ field: "key", value: key }] });
        expect(final.count).toBe(20);
        expect(
          await all[0]!.incrementOne!({
            model: "rateLimit",
            where: [{ field: "key", value: "no such key" }],
            increment: { count: 1 },
          }),
        ).toBeNull();
      },
      TIMEOUT,
    );
  }
});
