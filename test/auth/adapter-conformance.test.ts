/**
 * Better Auth 1.4.9's own adapter suite (`runAdapterTest`), unmodified, against both adapters on
 * real SQLite files, each suite on a fresh empty database:
 * - the direct adapter, every call made inside a real function of a real BackendRuntime (writes in a
 *   mutation, reads in a query, so the query ctx path is exercised too);
 * - the HTTP adapter, through the BackendRuntime's `runQuery` / `runMutation` of the `createApi` functions.
 */
import { runAdapterTest } from "better-auth/adapters/test";
import { afterAll, describe, expect, test } from "vitest";
import { adapter, httpAdapter } from "../../src/auth/adapter.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { startTestBackend } from "../helpers/service.ts";
import {
  authFunctions,
  directAdapterThroughFunctions,
  disableTests,
  modules,
  schema,
} from "./fixtures/adapter-harness.ts";

const backends: Promise<BackendRuntime>[] = [];
afterAll(async () => {
  for (const b of backends) await (await b).close();
});

describe("direct adapter (ctx.db inside real mutations and queries)", () => {
  const ready = startTestBackend({ schema, modules });
  backends.push(ready);
  runAdapterTest({
    getAdapter: async (customOptions = {}) => directAdapterThroughFunctions(await ready, customOptions),
    disableTests,
  });
});

describe("httpAdapter (runQuery / runMutation of the data functions)", () => {
  const ready = startTestBackend({ schema, modules });
  backends.push(ready);
  runAdapterTest({
    getAdapter: async (customOptions = {}) => {
      const ctx = await (await ready).actionCtx({ allowInternal: true });
      return httpAdapter(ctx, { authFunctions, schema })(customOptions);
    },
    disableTests,
  });
});

describe("numeric ids", () => {
  test("both adapters refuse generateId: 'serial' with a clear error instead of storing wrong ids", async () => {
    const backend = await startTestBackend({ schema, modules });
    backends.push(Promise.resolve(backend));
    const serial = { advanced: { database: { generateId: "serial" as const } } };
    const ctx = await backend.actionCtx({ allowInternal: true });
    expect(() => httpAdapter(ctx, { authFunctions, schema })(serial)).toThrow(/does not support numeric ids/);
    await backend.write(async (db) => {
      expect(() => adapter({ db } as any, { schema })(serial)).toThrow(/does not support numeric ids/);
    });
  });
});
