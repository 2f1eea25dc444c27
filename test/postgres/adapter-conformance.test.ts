/**
 * Better Auth 1.4.9's own adapter suite (`runAdapterTest`), unmodified, on PostgreSQL: the direct
 * adapter (every call inside a real mutation or query of a BackendRuntime on the PostgreSQL engine) and
 * the HTTP adapter (through `runQuery` / `runMutation`), each on a fresh database. Mirrors
 * test/auth/adapter-conformance.test.ts, which runs the same suite on SQLite.
 */
import { runAdapterTest } from "better-auth/adapters/test";
import { afterAll, describe } from "vitest";
import { httpAdapter } from "../../src/auth/adapter.ts";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import {
  authFunctions,
  directAdapterThroughFunctions,
  disableTests,
  modules,
  schema,
} from "../auth/fixtures/adapter-harness.ts";
import { postgresBinDir, type TestPostgres, usePostgres } from "../helpers/postgres.ts";

const backends: Promise<BackendRuntime>[] = [];

/** A started BackendRuntime on a fresh PostgreSQL database, created on first use (the server starts in beforeAll). */
function lazyBackend(server: () => TestPostgres): () => Promise<BackendRuntime> {
  let ready: Promise<BackendRuntime> | undefined;
  return () =>
    (ready ??= (async () => {
      const backend = new BackendRuntime({
        schema,
        modules,
        engine: new PostgresEngine({ connectionString: await server().createDatabase() }),
      });
      backends.push(Promise.resolve(backend));
      await backend.start();
      return backend;
    })());
}

describe.skipIf(!postgresBinDir)("Better Auth adapter suite on PostgreSQL", () => {
  const server = usePostgres();
  // Registered after usePostgres: after-hooks run in reverse, so backends close before the server stops.
  afterAll(async () => {
    for (const b of backends) await (await b).close();
  });

  describe("direct adapter (ctx.db inside real mutations and queries)", () => {
    const backend = lazyBackend(server);
    runAdapterTest({
      getAdapter: async (customOptions = {}) => directAdapterThroughFunctions(await backend(), customOptions),
      disableTests,
    });
  });

  describe("httpAdapter (runQuery / runMutation of the data functions)", () => {
    const backend = lazyBackend(server);
    runAdapterTest({
      getAdapter: async (customOptions = {}) => {
        const ctx = await (await backend()).actionCtx({ allowInternal: true });
        return httpAdapter(ctx, { authFunctions, schema })(customOptions);
      },
      disableTests,
    });
  });
});
