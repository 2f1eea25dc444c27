/**
 * The newest patched Better Auth line's adapter suites (`@better-auth/test-utils/adapter`, where
 * 1.7 moved `better-auth/adapters/test`) against both adapters on real SQLite files: the direct
 * adapter (every call inside a real mutation or query) and the HTTP adapter. Runs on that line only
 * (`npm run better-auth-next`; vitest.config.ts); adapter-conformance.test.ts runs 1.4.9's suite on
 * the pinned line.
 *
 * Run: case-insensitive where clauses (`Where.mode`), transactions and the auth flows. Not run:
 * the basic suite, which creates nearly every row with `forceAllowId` and compares the ids it chose;
 * document ids here are always the platform's (as for 1.4.9's SHOULD_PREFER_GENERATE_ID_IF_PROVIDED
 * in fixtures/adapter-harness.ts), so its results would measure that one difference.
 */
import {
  authFlowTestSuite,
  caseInsensitiveTestSuite,
  normalTestSuite,
  testAdapter,
  transactionsTestSuite,
} from "@better-auth/test-utils/adapter";
import type { BetterAuthOptions } from "better-auth";
import { afterAll, describe } from "vitest";
import { httpAdapter } from "../../src/auth/adapter.ts";
import { startTestBackend } from "../helpers/service.ts";
import {
  authFunctions,
  directAdapterThroughFunctions,
  INCREMENT_ONE_TEST,
  migratingBackend,
} from "./fixtures/adapter-harness.ts";

/** The suites run on every adapter and database of this line. */
const nextLineSuites = () => [
  caseInsensitiveTestSuite(),
  transactionsTestSuite(),
  authFlowTestSuite(),
  // Of the basic suite, the atomic methods' test (it compares no ids).
  normalTestSuite({ disableTests: { ALL: true, [INCREMENT_ONE_TEST]: false } }),
];

const onSqlite = () => migratingBackend((schema, modules) => startTestBackend({ schema, modules }));

describe("direct adapter (ctx.db inside real mutations and queries)", async () => {
  const db = onSqlite();
  afterAll(db.close);
  const { execute } = await testAdapter({
    adapter: async () => {
      const { backend, schema } = await db.current();
      return (options: BetterAuthOptions) => directAdapterThroughFunctions(backend, options, schema);
    },
    runMigrations: db.migrate,
    tests: nextLineSuites(),
  });
  execute();
});

describe("httpAdapter (runQuery / runMutation of the data functions)", async () => {
  const db = onSqlite();
  afterAll(db.close);
  const { execute } = await testAdapter({
    adapter: async () => {
      const { backend, schema } = await db.current();
      return httpAdapter(await backend.actionCtx({ allowInternal: true }), { authFunctions, schema });
    },
    runMigrations: db.migrate,
    tests: nextLineSuites(),
  });
  execute();
});
