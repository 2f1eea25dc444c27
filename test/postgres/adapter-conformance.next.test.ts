/**
 * The newest patched Better Auth line's adapter suites on PostgreSQL: the direct adapter and the
 * HTTP adapter, each migration on a fresh database. Mirrors test/auth/adapter-conformance.next.test.ts
 * (which says what runs and why); runs on that line only, adapter-conformance.test.ts on the pinned one.
 */
import {
  authFlowTestSuite,
  caseInsensitiveTestSuite,
  normalTestSuite,
  testAdapter,
  transactionsTestSuite,
} from "@better-auth/test-utils/adapter";
import type { BetterAuthOptions } from "better-auth";
import { afterAll, beforeAll, describe } from "vitest";
import { adapter, httpAdapter } from "../../src/auth/adapter.ts";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import {
  authFunctions,
  directAdapterThroughFunctions,
  INCREMENT_ONE_TEST,
  migratingBackend,
} from "../auth/fixtures/adapter-harness.ts";
import { postgresBinDir, type TestPostgres, usePostgres } from "../helpers/postgres.ts";

const nextLineSuites = () => [
  caseInsensitiveTestSuite(),
  transactionsTestSuite(),
  authFlowTestSuite(),
  // Of the basic suite, the atomic methods' test (it compares no ids).
  normalTestSuite({ disableTests: { ALL: true, [INCREMENT_ONE_TEST]: false } }),
];

/** Backends on fresh databases of `server`, one per migration. */
const onPostgres = (server: () => TestPostgres) =>
  migratingBackend(async (schema, modules) => {
    const engine = new PostgresEngine({ connectionString: await server().createDatabase() });
    const backend = new BackendRuntime({ schema, modules, engine });
    await backend.start();
    return backend;
  });

describe.skipIf(!postgresBinDir)("Better Auth 1.7 adapter suites on PostgreSQL", async () => {
  const server = usePostgres();
  const direct = onPostgres(server);
  const http = onPostgres(server);
  // `testAdapter` makes one adapter while the tests are collected, only to read its name; the
  // server starts later (beforeAll), so that one is an adapter with no database behind it.
  let collecting = true;
  beforeAll(() => {
    collecting = false;
  });
  const named = () => adapter({ db: {} } as never, { schema: direct.initialSchema });
  // Registered after usePostgres: after-hooks run in reverse, so backends close before the server stops.
  afterAll(async () => {
    await direct.close();
    await http.close();
  });

  describe("direct adapter (ctx.db inside real mutations and queries)", async () => {
    const { execute } = await testAdapter({
      adapter: async () => {
        if (collecting) return named();
        const { backend, schema } = await direct.current();
        return (options: BetterAuthOptions) => directAdapterThroughFunctions(backend, options, schema);
      },
      runMigrations: direct.migrate,
      tests: nextLineSuites(),
    });
    execute();
  });

  describe("httpAdapter (runQuery / runMutation of the data functions)", async () => {
    const { execute } = await testAdapter({
      adapter: async () => {
        if (collecting) return named();
        const { backend, schema } = await http.current();
        return httpAdapter(await backend.actionCtx({ allowInternal: true }), { authFunctions, schema });
      },
      runMigrations: http.migrate,
      tests: nextLineSuites(),
    });
    execute();
  });
});
