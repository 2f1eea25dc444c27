/**
 * Starts the example app (examples/app) in-process on a temp SQLite file and a free port, with
 * SITE_URL pointing at it, and drives it like a browser would: cookie jars, Origin headers,
 * sign-up, sign-in, the token endpoint and function calls with a bearer token.
 */
import { createServer } from "node:net";
import { ensureAuthEnv } from "../../src/auth/env.ts";
import type { Backend } from "../../src/backend/runtime.ts";
import type { SyncOptions } from "../../src/backend/sync/server.ts";
import { app, internal } from "../../examples/app/app.ts";
import { type JsonResponse, postJson } from "./http.ts";
import { startTestService, type TestService } from "./service.ts";

/** A free TCP port on 127.0.0.1 (SITE_URL must be known before the server listens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Cookies as a browser keeps them: set by `Set-Cookie`, removed by `Max-Age=0`. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** Raw `Set-Cookie` lines of the last response, for attribute checks. */
  lastSetCookies: string[] = [];

  absorb(response: Response | Headers): void {
    const headers = response instanceof Headers ? response : response.headers;
    this.lastSetCookies = headers.getSetCookie();
    for (const line of this.lastSetCookies) {
      const [pair, ...attributes] = line.split(";").map((s) => s.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired = attributes.some((a) => /^max-age=0$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

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
  backend: Backend;
  url: string;
  browser(): Browser;
  /** Signs a new user up; returns their browser (cookies set) and JWT. */
  signUp(email: string, password?: string, name?: string): Promise<{ browser: Browser; token: string; userId: string }>;
  /** Calls a function over HTTP with an optional bearer token. */
  call(kind: "query" | "mutation" | "action", path: string, args?: unknown, token?: string | null): Promise<JsonResponse>;
  /** Makes `email` an administrator (the `users:setRole` internal mutation). */
  makeAdmin(email: string): Promise<void>;
  close(): Promise<void>;
}

export const PASSWORD = "correct horse battery";

export async function startExampleApp(
  options: { databaseUrl?: string; staticKeys?: boolean; port?: number; sync?: SyncOptions } = {},
): Promise<ExampleApp> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const service = await startTestService({
    ...app,
    port,
    databaseUrl: options.databaseUrl,
    sync: options.sync,
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
    const jar = new CookieJar();
    const send = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          origin: url,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(jar.cookies.size ? { cookie: jar.header() } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      jar.absorb(response);
      const text = await response.text();
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    };
    return {
      jar,
      post: (path, body = {}) => send("POST", path, body),
      get: (path) => send("GET", path),
      token: () => send("GET", "/api/auth/backend/token"),
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
      await service.backend.runMutation(internal.users.setRole, { email, role: "admin" }, { allowInternal: true });
    },
    close: () => service.close(),
  };
}
