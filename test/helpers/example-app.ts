/**
 * Starts the example app (examples/app) in-process on a temp SQLite file and a free port, with
 * SITE_URL pointing at it, and drives it like a browser would: cookie jars, Origin headers,
 * sign-up, sign-in, the token endpoint and function calls with a bearer token.
 */

import { app, internal } from "../../examples/app/app.ts";
import { ensureAuthEnv } from "../../src/auth/keys/auth-env.ts";
import type { MetricsOptions } from "../../src/backend/metrics/endpoint.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import type { SchemaDefinition } from "../../src/backend/schema.ts";
import type { RuntimeServiceOptions } from "../../src/backend/service.ts";
import type { StorageEngine } from "../../src/backend/storage/engine.ts";
import type { SyncOptions } from "../../src/backend/sync/server.ts";
import { browserAt, CookieJar, freePort } from "./browser.ts";
import { type JsonResponse, postJson } from "./http.ts";
import { startTestService, type TestService } from "./service.ts";

export interface Browser {
  jar: CookieJar;
  /** POST to an auth endpoint with JSON, cookies and a trusted Origin. */
  post(path: string, body?: unknown): Promise<JsonResponse>;
  get(path: string): Promise<JsonResponse>;
  /** `GET /api/auth/backend/token`. */
  token(): Promise<JsonResponse<{ token?: string; code?: string; message?: string }>>;
}

export interface ExampleApp {
  service: TestService;
  backend: BackendRuntime;
  url: string;
  browser(): Browser;
  /** Signs a new user up; returns their browser (cookies set) and JWT. */
  signUp(
    email: string,
    password?: string,
    name?: string,
  ): Promise<{ browser: Browser; token: string; userId: string }>;
  /** Calls a function over HTTP with an optional bearer token. */
  call(
    kind: "query" | "mutation" | "action",
    path: string,
    args?: unknown,
    token?: string | null,
  ): Promise<JsonResponse>;
  /** Makes `email` an administrator (the `users:setRole` internal mutation). */
  makeAdmin(email: string): Promise<void>;
  close(): Promise<void>;
}

export { CookieJar, freePort };

export const PASSWORD = "correct horse battery";

export async function startExampleApp(
  options: {
    databaseUrl?: string;
    staticKeys?: boolean;
    port?: number;
    sync?: SyncOptions;
    /** Another schema than the example's (an edited one, as a developer would edit it). */
    schema?: SchemaDefinition;
    schemaCheck?: RuntimeServiceOptions["schemaCheck"];
    metrics?: MetricsOptions;
    /** Another storage engine than the one `databaseUrl` opens (e.g. PostgreSQL with options). */
    engine?: StorageEngine;
  } = {},
): Promise<ExampleApp> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const service = await startTestService({
    ...app,
    port,
    databaseUrl: options.databaseUrl,
    sync: options.sync,
    ...(options.schema ? { schema: options.schema } : {}),
    schemaCheck: options.schemaCheck,
    metrics: options.metrics,
    ...(options.engine ? { engine: options.engine } : {}),
    envDefaults: { SITE_URL: url },
    prepare: async (backend) => {
      if (options.staticKeys === false) {
        await backend.env.set("SERVICE_AUTH_SECRET", "test-secret-test-secret-test-secret-0123");
        return;
      }
      await ensureAuthEnv(backend, internal.auth.getLatestJwks);
    },
  });

  const browser = (): Browser => {
    const b = browserAt(url);
    return {
      jar: b.jar,
      post: (path, body = {}) => b.send("POST", path, body),
      get: (path) => b.send("GET", path),
      token: () => b.send("GET", "/api/auth/backend/token"),
    };
  };

  const call: ExampleApp["call"] = (kind, path, args = {}, token) =>
    postJson(`${url}/api/${kind}`, { path, args }, token ? { authorization: `Bearer ${token}` } : {});

  return {
    service,
    backend: service.backend,
    url,
    browser,
    call,
    async signUp(email, password = PASSWORD, name = email.split("@")[0]) {
      const b = browser();
      const res = await b.post("/api/auth/sign-up/email", { email, password, name });
      if (res.status !== 200) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
      const token = b.jar.get("service-auth.jwt");
      if (!token) throw new Error("sign-up set no service-auth.jwt cookie");
      return { browser: b, token, userId: res.body.user.id };
    },
    async makeAdmin(email) {
      await service.backend.runMutation(
        internal.users.setRole,
        { email, role: "admin" },
        { allowInternal: true },
      );
    },
    close: () => service.close(),
  };
}
