/**
 * Starts the auth fixture app (test/auth/fixtures/auth-app.ts) on a temp SQLite file and a free
 * port with SITE_URL pointing at it, plus a cookie-keeping browser for any auth base path.
 */
import { type FixtureOptions, fixtureApp } from "../auth/fixtures/auth-app.ts";
import { CookieJar, freePort, PASSWORD } from "./example-app.ts";
import { callFunction, type JsonResponse } from "./http.ts";
import { startTestService, type TestService } from "./service.ts";

export interface FixtureBrowser {
  jar: CookieJar;
  /** Raw `Set-Cookie` lines of the last response. */
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse>;
}

/** A browser at `url`: keeps cookies, sends the site's Origin, JSON bodies. */
export function browserAt(url: string): FixtureBrowser {
  const jar = new CookieJar();
  return {
    jar,
    async send(method, path, body, headers = {}) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          origin: url,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(jar.cookies.size ? { cookie: jar.header() } : {}),
          ...headers,
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
    },
  };
}

export interface AuthFixture {
  service: TestService;
  url: string;
  basePath: string;
  browser(): FixtureBrowser;
  /** Signs up through `{basePath}/sign-up/email`; the raw response is returned too. */
  signUp(email: string): Promise<{ browser: FixtureBrowser; response: JsonResponse; token?: string }>;
  call(kind: "query" | "mutation" | "action", path: string, args?: unknown, token?: string | null): Promise<JsonResponse>;
  close(): Promise<void>;
}

export async function startAuthFixture(options: FixtureOptions = {}): Promise<AuthFixture> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const basePath = options.basePath ?? "/api/auth";
  const service = await startTestService({ ...fixtureApp(options), port, envDefaults: { SITE_URL: url } });
  return {
    service,
    url,
    basePath,
    browser: () => browserAt(url),
    async signUp(email) {
      const browser = browserAt(url);
      const response = await browser.send("POST", `${basePath}/sign-up/email`, { email, password: PASSWORD, name: "Fixture" });
      return { browser, response, token: browser.jar.get("service-auth.jwt") };
    },
    call: (kind, path, args = {}, token) =>
      callFunction(url, kind, path, args, token ? { authorization: `Bearer ${token}` } : {}),
    close: () => service.close(),
  };
}
