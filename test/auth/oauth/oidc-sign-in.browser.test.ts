/**
 * OAuth end to end: a real OpenID Connect provider (`oidc-provider`, started here) and the example
 * app's generic OAuth sign-in (`OIDC_ISSUER`, PKCE on, state in the database), driven in Chromium
 * through the provider's login and consent pages. A sign-in links the provider account, sets the
 * `service-auth.jwt` cookie and a protected query answers; a denied consent and a callback
 * arriving in a browser that did not start the sign-in (login CSRF, state mismatch) end on Better
 * Auth's error page with a named error, no session and no JWT.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GENERIC_OAUTH, ON_PINNED_LINE } from "../../helpers/better-auth-line.ts";
import { findChromium, TestBrowser } from "../../helpers/chromium.ts";
import { type ExampleApp, startExampleApp } from "../../helpers/example-app.ts";
import { startOidcProvider, type TestOidcProvider } from "../../helpers/oidc-provider.ts";

/** Generous per-step wait: the first load of the app page bundles its scripts with esbuild. */
const STEP_TIMEOUT_MS = 20_000;
const USERS = {
  alice: { email: "alice@idp.example.com", name: "Alice Provider", email_verified: true },
  bob: { email: "bob@idp.example.com", name: "Bob Provider", email_verified: true },
  carol: { email: "carol@idp.example.com", name: "Carol Provider", email_verified: true },
};

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)("OpenID Connect sign-in in Chromium", { timeout: 90_000 }, () => {
  let app: ExampleApp;
  let idp: TestOidcProvider;
  let browser: TestBrowser;

  beforeAll(async () => {
    [app, browser] = await Promise.all([
      startExampleApp(),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
    ]);
    idp = await startOidcProvider({
      redirectUri: `${app.url}/api/auth${GENERIC_OAUTH.callback("oidc")}`,
      users: USERS,
    });
    await app.backend.env.set("OIDC_ISSUER", idp.issuer);
    await app.backend.env.set("OIDC_CLIENT_ID", idp.clientId);
    await app.backend.env.set("OIDC_CLIENT_SECRET", idp.clientSecret);
  });
  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await app?.close();
  });
  afterEach(async () => {
    expect(await browser.endTest()).toEqual([]);
  });

  async function newPage(): Promise<Page> {
    return (await browser.newContext()).newPage();
  }

  /** Starts the sign-in from an app page, as a "Sign in with …" button would; returns the provider URL. */
  async function startSignIn(page: Page): Promise<string> {
    await page.goto(`${app.url}/api/auth/ok`);
    const request = { path: `/api/auth${GENERIC_OAUTH.signIn}`, body: GENERIC_OAUTH.signInBody("oidc", "/") };
    const started = await page.evaluate(async ({ path, body }) => {
      const res = await fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    }, request);
    expect(started.status).toBe(200);
    const url = new URL(started.body.url);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    return url.href;
  }

  /** On the provider: log in as `login`, then reach the consent page. */
  async function logInAtProvider(page: Page, providerUrl: string, login: string): Promise<void> {
    await page.goto(providerUrl);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill("any password");
    await page.locator("button[type=submit]").click();
    await page.getByRole("button", { name: "Continue" }).waitFor();
  }

  const jwtCookie = async (page: Page) =>
    (await page.context().cookies(app.url)).find((c) => c.name === "service-auth.jwt")?.value;
  const usersWithEmail = async (email: string) =>
    (await app.backend.read((db) => db.query("user").collect())).filter((u: any) => u.email === email);

  it("signs in: the account is linked, the JWT cookie set, a protected query answers, the page shows the user", async () => {
    const page = await newPage();
    await logInAtProvider(page, await startSignIn(page), "alice");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL(`${app.url}/`);
    await page.locator("#signed-in").waitFor({ state: "visible" });
    expect(await page.locator("#me-name").textContent()).toBe(USERS.alice.name);

    const jwt = await jwtCookie(page);
    expect(jwt).toBeTruthy();
    const me = await app.call("query", "users:me", {}, jwt);
    expect(me.status, me.text).toBe(200);
    expect(me.body.value).toMatchObject({ email: USERS.alice.email, name: USERS.alice.name });

    const accounts = (await app.backend.read((db) => db.query("account").collect())).filter(
      (a: any) => a.userId === me.body.value._id,
    );
    expect(accounts.map((a: any) => [a.providerId, a.accountId])).toEqual([["oidc", "alice"]]);
    expect((await usersWithEmail(USERS.alice.email))[0].emailVerified).toBe(true);
  });

  it("a denied consent ends on the error page with access_denied: no user, no session, no JWT", async () => {
    const page = await newPage();
    await logInAtProvider(page, await startSignIn(page), "bob");
    const landing = page.waitForResponse((r) => r.url().startsWith(`${app.url}/api/auth/error`));
    await page.getByRole("link", { name: "[ Cancel ]" }).click();
    const response = await landing;
    expect(response.status()).toBe(200);
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
    expect(await page.locator("body").textContent()).toContain("access_denied");
    expect(await jwtCookie(page)).toBeUndefined();
    expect(await usersWithEmail(USERS.bob.email)).toEqual([]);
  });

  it("a callback in a browser that did not start the sign-in is refused with state_mismatch", async () => {
    // The attacker starts a sign-in and hands the provider link to the victim (login CSRF).
    const attacker = await newPage();
    const providerUrl = await startSignIn(attacker);
    const victim = await newPage();
    await logInAtProvider(victim, providerUrl, "carol");
    const landing = victim.waitForResponse((r) => r.url().startsWith(`${app.url}/api/auth/error`));
    await victim.getByRole("button", { name: "Continue" }).click();
    expect((await landing).status()).toBe(200);
    expect(new URL(victim.url()).searchParams.get("error")).toBe("state_mismatch");
    expect(await jwtCookie(victim)).toBeUndefined();
    expect(await usersWithEmail(USERS.carol.email)).toEqual([]);
  });

  it("a callback with a state the app never issued asks to restart, not a 500", async () => {
    const page = await newPage();
    const response = await page.goto(
      `${app.url}/api/auth${GENERIC_OAUTH.callback("oidc")}?code=forged&state=forged-state`,
    );
    expect(response!.status()).toBe(200);
    // 1.4.9 asks to restart; the patched line names the cause.
    const unknownState = ON_PINNED_LINE ? "please_restart_the_process" : "state_mismatch";
    expect(new URL(page.url()).searchParams.get("error")).toBe(unknownState);
    expect(await jwtCookie(page)).toBeUndefined();
  });
});
