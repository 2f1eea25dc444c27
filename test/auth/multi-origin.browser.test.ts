/**
 * Several sites on one backend (`TRUSTED_ORIGINS`), in Chromium: two sites on two loopback origins
 * sign up, fetch a token and run a protected query against one backend (a real `npm start`
 * process with Better Auth's origin check live); a third, unlisted origin is stopped by the
 * browser at the preflight (the sign-up never reaches the server), and its state-changing POST is
 * refused by the origin check when sent without a browser.
 */
import { createServer, type Server } from "node:http";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/browser.ts";
import { findChromium, TestBrowser } from "../helpers/chromium.ts";
import { PASSWORD } from "../helpers/example-app.ts";
import { type ExampleServer, spawnExampleServer } from "../helpers/example-server.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const STEP_TIMEOUT_MS = 20_000;
const chromiumPath = findChromium();

/** A site: one blank page on its own origin, from which the test's scripts call the backend. */
async function startSite(host: string): Promise<{ origin: string; server: Server }> {
  const port = await freePort();
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>site</title>");
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { origin: `http://${host}:${port}`, server };
}

/** What a site's script gets back from the backend: each step's status, or the fetch error. */
interface SiteRun {
  signUp: number | string;
  token?: number;
  me?: unknown;
}

/**
 * In the site's page: sign up through the cookie bridge (`Set-Service-Auth-Cookie`), fetch a
 * backend token with it (`Service-Auth-Cookie`), then query `users:me` with the token.
 */
function signUpAndQuery(page: Page, backend: string, email: string): Promise<SiteRun> {
  return page.evaluate(
    async ({ backend, email, password }) => {
      const run: SiteRun = { signUp: 0 };
      let res: Response;
      try {
        res = await fetch(`${backend}/api/auth/sign-up/email`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email, password, name: "site" }),
        });
      } catch (error) {
        run.signUp = String(error);
        return run;
      }
      run.signUp = res.status;
      const setCookies = res.headers.get("set-service-auth-cookie") ?? "";
      const cookie = [...setCookies.matchAll(/(?:^|, )([\w.-]+=[^;]*)/g)].map((m) => m[1]).join("; ");
      const tokenRes = await fetch(`${backend}/api/auth/backend/token`, {
        headers: { "service-auth-cookie": cookie },
      });
      run.token = tokenRes.status;
      const { token } = await tokenRes.json();
      const me = await fetch(`${backend}/api/query`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ path: "users:me", args: {} }),
      });
      run.me = await me.json();
      return run;
    },
    { backend, email, password: PASSWORD },
  );
}

describe.skipIf(!chromiumPath)("several sites on one backend, in Chromium", { timeout: 120_000 }, () => {
  let server: ExampleServer;
  let browser: TestBrowser;
  const sites: { origin: string; server: Server }[] = [];

  beforeAll(async () => {
    // Two listed sites on two loopback names (two origins, two sites), one unlisted.
    sites.push(await startSite("localhost"), await startSite("127.0.0.1"), await startSite("127.0.0.1"));
    [server, browser] = await Promise.all([
      spawnExampleServer({
        DATABASE_URL: tempDatabaseFile(),
        TRUSTED_ORIGINS: `${sites[0].origin}, ${sites[1].origin}/`,
        // Better Auth skips its origin check in tests: this process is a production-like start.
        TEST: undefined,
        VITEST: undefined,
      } as any),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
    ]);
  }, PROCESS_TEST_TIMEOUT);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    for (const site of sites) site.server.close();
  });
  afterEach(async () => {
    expect(await browser.endTest()).toEqual([]);
  });

  async function pageOn(origin: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${origin}/`);
    return page;
  }

  it("each listed site signs in and queries; an unlisted one is stopped at the preflight", async () => {
    for (const [i, site] of sites.slice(0, 2).entries()) {
      const email = `site${i}@example.com`;
      const run = await signUpAndQuery(await pageOn(site.origin), server.url, email);
      expect(run.signUp).toBe(200);
      expect(run.token).toBe(200);
      expect(run.me).toMatchObject({ value: { email } });
    }

    const unlisted = await signUpAndQuery(await pageOn(sites[2].origin), server.url, "stranger@example.com");
    expect(unlisted.signUp).toMatch(/TypeError: Failed to fetch/);
    // The preflight failed, so the sign-up never ran: the account does not exist.
    const signIn = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { origin: server.url, "content-type": "application/json" },
      body: JSON.stringify({ email: "stranger@example.com", password: PASSWORD }),
    });
    expect(signIn.status).toBe(401);
    await signIn.text();
  });

  it("answers each listed origin with itself, never another or `*`, and varies on Origin", async () => {
    for (const origin of [sites[0].origin, sites[1].origin, sites[2].origin, "https://evil.example"]) {
      const res = await fetch(`${server.url}/api/query`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
      await res.text();
      const listed = origin === sites[0].origin || origin === sites[1].origin;
      expect(res.headers.get("access-control-allow-origin")).toBe(listed ? origin : null);
      expect(res.headers.get("vary")).toContain("Origin");
    }
  });

  it("refuses a state-changing POST carrying a session from an unlisted origin; a listed one works", async () => {
    const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { origin: sites[1].origin, "content-type": "application/json" },
      body: JSON.stringify({ email: "bridge@example.com", password: PASSWORD, name: "bridge" }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const cookie = res.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const signOut = (origin: string) =>
      fetch(`${server.url}/api/auth/sign-out`, {
        method: "POST",
        headers: { origin, "content-type": "application/json", "service-auth-cookie": cookie },
        body: "{}",
      });
    const refused = await signOut(sites[2].origin);
    expect(refused.status).toBe(403);
    await refused.text();
    const allowed = await signOut(sites[0].origin);
    expect(allowed.status).toBe(200);
    await allowed.text();
  });
});
