/**
 * Starts the auth fixture app (test/auth/fixtures/auth-app.ts) on a temp SQLite file and a free
 * port with SITE_URL pointing at it, plus a cookie-keeping browser for any auth base path.
 */
import { type FixtureOptions, fixtureApp } from "../auth/fixtures/auth-app.ts";
import { browserAt, type FixtureBrowser, freePort } from "./browser.ts";
import { PASSWORD } from "./example-app.ts";
import { callFunction, type JsonResponse } from "./http.ts";

export { browserAt, type FixtureBrowser };

import { startTestService, type TestService } from "./service.ts";

export interface AuthFixture {
  service: TestService;
  url: string;
  basePath: string;
  browser(): FixtureBrowser;
  /** Signs up through `{basePath}/sign-up/email`; the raw response is returned too. */
  signUp(email: string): Promise<{ browser: FixtureBrowser; response: JsonResponse; token?: string }>;
  call(
    kind: "query" | "mutation" | "action",
    path: string,
    args?: unknown,
    token?: string | null,
  ): Promise<JsonResponse>;
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
      const response = await browser.send("POST", `${basePath}/sign-up/email`, {
        email,
        password: PASSWORD,
        name: "Fixture",
      });
      return { browser, response, token: browser.jar.get("service-auth.jwt") };
    },
    call: (kind, path, args = {}, token) =>
      callFunction(url, kind, path, args, token ? { authorization: `Bearer ${token}` } : {}),
    close: () => service.close(),
  };
}
