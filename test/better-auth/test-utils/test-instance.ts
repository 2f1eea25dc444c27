/**
 * Our replacement for Better Auth 1.4.9's `src/test-utils/test-instance.ts`, at the same path
 * relative to the ported tests. It is upstream's helper with one change: the database. Where
 * upstream migrates a fresh in-memory SQLite database through Kysely, this starts a fresh
 * BackendRuntime on a SQLite file with the auth tables of the instance's own options
 * (`defineAuthTables(options)`, the platform creates them at start) and gives Better Auth one of
 * our adapters:
 * - `http` (default): `httpAdapter` over the BackendRuntime's action ctx, as HTTP routes and actions use it;
 * - `direct` (`BETTER_AUTH_TESTS_ADAPTER=direct`): the direct adapter, every call made inside a
 *   real mutation (writes) or query (reads) of the BackendRuntime, Better Auth's transactions in
 *   `runInTransaction`.
 * A test that passes its own `database` (memory adapter) keeps it, as upstream.
 * `BETTER_AUTH_TESTS_DATABASE=postgres` puts the BackendRuntime on PostgreSQL instead (a server per test
 * file, a fresh database per instance).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { BetterAuthOptions } from "better-auth";
import { betterAuth } from "better-auth";
import { createAuthClient } from "better-auth/client";
import { parseSetCookieHeader, setCookieToHeader } from "better-auth/cookies";
import { bearer } from "better-auth/plugins";
import { getBaseURL } from "better-auth-dist/utils/url.mjs";
import { afterAll } from "vitest";
import { adapter, httpAdapter } from "../../../src/auth/adapter.ts";
import { type AuthFunctions, createApi } from "../../../src/auth/data/functions.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { functionsFor } from "../../../src/backend/functions/define.ts";
import { anyApi } from "../../../src/backend/functions/references.ts";
import { type BackendOptions, BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema, type SchemaDefinition } from "../../../src/backend/schema.ts";
import { PostgresEngine } from "../../../src/backend/storage/postgres/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { startPostgres, type TestPostgres } from "../../helpers/postgres.ts";
import { startTestBackend } from "../../helpers/service.ts";

export const ADAPTER = (process.env.BETTER_AUTH_TESTS_ADAPTER ?? "http") as "http" | "direct";
export const DATABASE = (process.env.BETTER_AUTH_TESTS_DATABASE ?? "sqlite") as "sqlite" | "postgres";

const backends = new Set<BackendRuntime>();
let postgres: Promise<TestPostgres> | undefined;
afterAll(async () => {
  for (const backend of backends) await backend.close();
  backends.clear();
  await (await postgres)?.stop();
});

async function startBackend(options: Omit<BackendOptions, "engine">): Promise<BackendRuntime> {
  if (DATABASE === "sqlite") return startTestBackend(options);
  postgres ??= startPostgres();
  const engine = new PostgresEngine({ connectionString: await (await postgres).createDatabase() });
  const backend = new BackendRuntime({ ...options, engine });
  await backend.start();
  return backend;
}

type CurrentUserContext = { headers: Headers };
const currentUserContextStorage = new AsyncLocalStorage<CurrentUserContext>();

const WRITES = new Set(["create", "update", "updateMany", "delete", "deleteMany"]);
const METHODS = ["create", "findOne", "findMany", "count", "update", "updateMany", "delete", "deleteMany"];

/** A fresh BackendRuntime on a SQLite file holding the auth tables of `options`. */
async function startAuthBackend(options: BetterAuthOptions) {
  const schema = defineSchema(defineAuthTables(options as any) as any) as SchemaDefinition;
  const { internalMutation, internalQuery } = functionsFor(schema);
  const configs = new Map<number, BetterAuthOptions>();
  const run = (ctx: any, { method, args, config }: { method: string; args: unknown; config: number }) =>
    (adapter(ctx, { schema })(configs.get(config)!) as any)[method](args);
  const direct = {
    write: internalMutation({
      args: { method: v.string(), args: v.any(), config: v.number() },
      handler: run,
    }),
    read: internalQuery({ args: { method: v.string(), args: v.any(), config: v.number() }, handler: run }),
  };
  const backend = await startBackend({ schema, modules: { auth: createApi(schema), direct } });
  backends.add(backend);

  /** The direct adapter with every call a real mutation or query of `backend`. */
  const directDatabase = (authOptions: BetterAuthOptions) => {
    const config = configs.size;
    configs.set(config, authOptions);
    const caller = { allowInternal: true };
    const shape = adapter({ db: {} } as any, { schema })(authOptions);
    const through: typeof shape = {
      ...shape,
      transaction: (callback) => backend.runInTransaction(() => callback(through)),
    };
    for (const method of METHODS) {
      (through as any)[method] = async (args: unknown) =>
        WRITES.has(method)
          ? (await backend.runMutation("direct:write", { method, args, config }, caller)).value
          : (await backend.runQuery("direct:read", { method, args, config }, caller)).value;
    }
    return through;
  };

  const database: BetterAuthOptions["database"] =
    ADAPTER === "direct"
      ? (authOptions: BetterAuthOptions) => directDatabase(authOptions)
      : httpAdapter(await backend.actionCtx({ allowInternal: true }), {
          authFunctions: anyApi.auth as AuthFunctions,
          schema,
        });
  return database;
}

export async function getTestInstance<O extends Partial<BetterAuthOptions>, C extends Record<string, any>>(
  options?: O | undefined,
  config?:
    | {
        clientOptions?: C;
        port?: number;
        disableTestUser?: boolean;
        testUser?: Partial<Record<string, any>>;
        testWith?: "sqlite" | "postgres" | "mongodb" | "mysql";
      }
    | undefined,
) {
  const opts = {
    socialProviders: {
      github: { clientId: "test", clientSecret: "test" },
      google: { clientId: "test", clientSecret: "test" },
    },
    secret: "better-auth-secret-that-is-long-enough-for-validation-test",
    emailAndPassword: { enabled: true },
    rateLimit: { enabled: false },
    advanced: { cookies: {} },
    logger: { level: "debug" },
  } satisfies BetterAuthOptions;

  const merged = {
    baseURL: `http://localhost:${config?.port || 3000}`,
    ...opts,
    ...options,
    plugins: [bearer(), ...(options?.plugins || [])],
  } as BetterAuthOptions;
  const database = options?.database ?? (await startAuthBackend(merged));
  const auth = betterAuth({ ...merged, database } as unknown as O);

  const testUser = {
    email: "test@test.com",
    password: "test123456",
    name: "test user",
    ...config?.testUser,
  };
  async function createTestUser() {
    if (config?.disableTestUser) return;
    await (auth.api as any).signUpEmail({ body: testUser });
  }
  await createTestUser();

  const customFetchImpl = async (url: string | URL | Request, init?: RequestInit | undefined) => {
    const headers = init?.headers || {};
    const storageHeaders = currentUserContextStorage.getStore()?.headers;
    return auth.handler(
      new Request(
        url,
        init
          ? {
              ...init,
              headers: new Headers({
                ...(storageHeaders ? Object.fromEntries(storageHeaders.entries()) : {}),
                ...(headers instanceof Headers
                  ? Object.fromEntries(headers.entries())
                  : typeof headers === "object"
                    ? (headers as Record<string, string>)
                    : {}),
              }),
            }
          : { headers },
      ),
    );
  };

  const client = createAuthClient({
    ...(config?.clientOptions as C extends undefined ? {} : C),
    baseURL: getBaseURL(
      options?.baseURL || `http://localhost:${config?.port || 3000}`,
      options?.basePath || "/api/auth",
    ),
    fetchOptions: { customFetchImpl },
  });

  const sessionCookieOf = (context: { response: Response }) => {
    const header = context.response.headers.get("set-cookie");
    return parseSetCookieHeader(header || "").get("better-auth.session_token")?.value;
  };

  async function signInWithTestUser() {
    if (config?.disableTestUser) throw new Error("Test user is disabled");
    const headers = new Headers();
    const setCookie = (name: string, value: string) => {
      const current = headers.get("cookie");
      headers.set("cookie", `${current || ""}; ${name}=${value}`);
    };
    const { data } = await (client as any).signIn.email({
      email: testUser.email,
      password: testUser.password,
      fetchOptions: {
        onSuccess(context: { response: Response }) {
          headers.set("cookie", `better-auth.session_token=${sessionCookieOf(context)}`);
        },
      },
    });
    return {
      session: data.session,
      user: data.user,
      headers,
      setCookie,
      runWithUser: async (fn: (headers: Headers) => Promise<void>) =>
        currentUserContextStorage.run({ headers }, async () => {
          await fn(headers);
        }),
    };
  }

  async function signInWithUser(email: string, password: string) {
    const headers = new Headers();
    const { data } = await (client as any).signIn.email({
      email,
      password,
      fetchOptions: {
        onSuccess(context: { response: Response }) {
          headers.set("cookie", `better-auth.session_token=${sessionCookieOf(context)}`);
        },
      },
    });
    return { res: data, headers };
  }

  function sessionSetter(headers: Headers) {
    return (context: { response: Response }) => {
      const header = context.response.headers.get("set-cookie");
      if (header) headers.set("cookie", `better-auth.session_token=${sessionCookieOf(context)}`);
    };
  }

  return {
    auth,
    client,
    testUser,
    signInWithTestUser,
    signInWithUser,
    cookieSetter: setCookieToHeader,
    customFetchImpl,
    sessionSetter,
    db: (await auth.$context).adapter,
    runWithUser: async (email: string, password: string, fn: (headers: Headers) => unknown) => {
      const { headers } = await signInWithUser(email, password);
      return currentUserContextStorage.run({ headers }, async () => {
        await fn(headers);
      });
    },
  };
}
