/**
 * The scenarios every server-rendering framework example passes in Chromium (examples/sveltekit,
 * examples/tanstack-start), against the example app's backend on another port: the server's
 * loader fetches the signed-in user's messages with the request's JWT, the page hydrates showing
 * them and goes live over the backend's WebSocket; sign-up, sign-in and sign-out go through the
 * site's `/api/auth` proxy; a revocation from another device reaches the page. Each example's
 * test file names its build and server; the markup contract (`#messages[data-live]`, `#send`,
 * `#sign-in`, `#user`, `#sign-out`, `#sign-in-error`) is the same in every example.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { api, app, internal } from "../../examples/app/app.ts";
import { ensureAuthEnv } from "../../src/auth/keys/auth-env.ts";
import { fetchMutation } from "../../src/client/server-rendering.ts";
import { browserAt, type FixtureBrowser, freePort } from "./browser.ts";
import { findChromium, launchChromium } from "./chromium.ts";
import type { ExampleServer } from "./framework-example.ts";
import { startTestService, type TestService } from "./service.ts";

/** One framework example as its test runs it. */
export interface FrameworkExampleUnderTest {
  /** The describe block's name, e.g. "SvelteKit example in Chromium". */
  name: string;
  /** Builds the example (cached by source hash). */
  buildExample(): Promise<unknown>;
  /** Starts its production server on `port` against the backend at `backendUrl`. */
  startExample(port: number, backendUrl: string): Promise<ExampleServer>;
  /** Prefix of the e-mail addresses its users sign up with (unique per file). */
  emailPrefix: string;
}

const PASSWORD = "correct horse battery";
/** Per browser step: a production server answers fast, but the machine may be loaded. */
const STEP_TIMEOUT_MS = 20_000;

const chromiumPath = findChromium();

/**
 * The example's sign-in form as a click before hydration meets it (JavaScript off, so the page
 * never hydrates): posted, not sent as a `GET` with the password in the URL, and its buttons
 * disabled, so no native submit happens at all.
 */
export async function expectSignInInertBeforeHydration(browser: Browser, url: string): Promise<void> {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(url);
    const form = page.locator("#sign-in");
    expect(await form.getAttribute("method")).toBe("post");
    for (const value of ["sign-in", "sign-up"])
      expect(await form.locator(`button[value=${value}]`).isDisabled()).toBe(true);
  } finally {
    await context.close();
  }
}

/** Declares the example's Chromium scenarios (a describe block; skipped loudly without Chromium). */
export function describeFrameworkExample(example: FrameworkExampleUnderTest): void {
  describe.skipIf(!chromiumPath)(example.name, { timeout: 90_000 }, () => {
    let backend: TestService;
    let site: ExampleServer;
    let browser: Browser;
    let n = 0;
    const contexts: { context: BrowserContext; errors: string[] }[] = [];

    // `vite build` takes a minute on a loaded machine (skipped when the sources are unchanged).
    beforeAll(async () => {
      const port = await freePort();
      const siteUrl = `http://localhost:${port}`;
      const [, service, chromium] = await Promise.all([
        example.buildExample(),
        startTestService({
          ...app,
          envDefaults: { SITE_URL: siteUrl },
          prepare: async (b) => void (await ensureAuthEnv(b, internal.auth.getLatestJwks)),
        }),
        launchChromium(chromiumPath as string),
      ]);
      backend = service;
      browser = chromium;
      site = await example.startExample(port, backend.url);
      expect(site.url).toBe(siteUrl);
    }, 600_000);

    afterAll(async () => {
      await browser?.close();
      await site?.stop();
      await backend?.close();
    });

    afterEach(async () => {
      // Uncaught errors, console errors (hydration mismatches) and 5xx answers are bugs in any scenario.
      const errors = contexts.flatMap((c) => c.errors);
      await Promise.all(contexts.splice(0).map((c) => c.context.close()));
      expect(errors).toEqual([]);
    });

    async function newPage(cookies: FixtureBrowser["jar"] | null = null): Promise<Page> {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      context.setDefaultTimeout(STEP_TIMEOUT_MS);
      const errors: string[] = [];
      contexts.push({ context, errors });
      if (cookies) {
        await context.addCookies(
          [...cookies.cookies].map(([name, value]) => ({ name, value, url: site.url })),
        );
      }
      const page = await context.newPage();
      page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
      page.on("console", (message) => {
        // Chromium logs every 4xx as a console error; those answers (a wrong password, the token
        // endpoint after sign-out) are expected, 5xx are collected below.
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
          errors.push(`console: ${message.text()}`);
      });
      page.on("response", (response) => {
        if (response.status() >= 500) errors.push(`${response.status()} ${response.url()}`);
      });
      return page;
    }

    /** Signs a user up through the app's `/api/auth` proxy; returns their cookies and JWT. */
    async function signUp() {
      const email = `${example.emailPrefix}${++n}x${Date.now()}@example.com`;
      const user = browserAt(site.url);
      const res = await user.send("POST", "/api/auth/sign-up/email", {
        email,
        password: PASSWORD,
        name: "S",
      });
      expect(res.status).toBe(200);
      const token = user.jar.get("service-auth.jwt");
      expect(token).toBeTruthy();
      return { email, jar: user.jar, user, token: token as string, username: email.split("@")[0] };
    }

    const send = (body: string, token: string) =>
      fetchMutation(api.messages.send, { body }, { url: backend.url, token });

    it("server-renders the user's messages, hydrates without a loading state and goes live", async () => {
      const user = await signUp();
      const first = `first ${n}`;
      const second = `second ${n}`;
      await send(first, user.token);
      await send(second, user.token);

      const page = await newPage(user.jar);
      const sockets: string[] = [];
      page.on("websocket", (ws) => sockets.push(ws.url()));
      // Every DOM change from the first parsed byte on: the list's text, or null when it is absent.
      await page.addInitScript(() => {
        const seen: (string | null)[] = [];
        (window as unknown as { seen: typeof seen }).seen = seen;
        new MutationObserver(() => {
          seen.push(document.getElementById("messages")?.textContent ?? null);
        }).observe(document, { childList: true, subtree: true, characterData: true });
      });

      const response = await page.goto(site.url);
      const html = await response!.text();
      // Server-rendered: the HTML itself has the user's name and the messages.
      expect(html).toContain(user.username);
      expect(html).toContain(first);
      expect(html).toContain(second);

      await page.locator('#messages[data-live="true"]').waitFor({ state: "attached" });
      expect(sockets.some((url) => url.startsWith(`${backend.url.replace("http", "ws")}/api/sync`))).toBe(
        true,
      );

      // Live: a message sent elsewhere appears without a reload, and so does one sent from the page.
      const third = `third ${n}`;
      await send(third, user.token);
      await page.locator("#messages li", { hasText: third }).waitFor();
      const fourth = `fourth ${n}`;
      await page.locator("#send input[name=body]").fill(fourth);
      await page.locator("#send button").click();
      await page.locator("#messages li", { hasText: fourth }).waitFor();
      const texts = await page.locator("#messages li").allTextContents();
      expect(texts.filter((t) => [first, second, third, fourth].some((m) => t.endsWith(m)))).toHaveLength(4);

      // No loading flash: once the list showed the server's messages it never lost them.
      const seen = await page.evaluate(() => (window as unknown as { seen: (string | null)[] }).seen);
      const shown = seen.findIndex((text) => text?.includes(first) && text.includes(second));
      expect(shown).toBeGreaterThanOrEqual(0);
      expect(seen.slice(shown).filter((text) => !(text?.includes(first) && text.includes(second)))).toEqual(
        [],
      );
      expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
    });

    it("renders from the JWT cookie without asking the backend for a token, and keeps a fetched one as a cookie", async () => {
      const user = await signUp();
      const get = (cookie: string) => fetch(site.url, { headers: { cookie } });
      // Fresh JWT, no session cookie: the cached token is used (the token endpoint would refuse).
      const jwtOnly = await get(`service-auth.jwt=${user.token}`);
      expect(await jwtOnly.text()).toContain(`<span id="user">${user.username}</span>`);
      expect(jwtOnly.headers.getSetCookie()).toEqual([]);
      // Session cookie, no JWT: one is fetched from the token endpoint and handed to the browser,
      // so the next navigation needs no round trip to the backend.
      const sessionOnly = await get(
        `service-auth.session_token=${user.jar.get("service-auth.session_token")}`,
      );
      expect(await sessionOnly.text()).toContain(`<span id="user">${user.username}</span>`);
      const jwtCookie = sessionOnly.headers.getSetCookie().find((c) => c.startsWith("service-auth.jwt="));
      expect(jwtCookie).toBeTruthy();
      const fetched = jwtCookie!.slice("service-auth.jwt=".length).split(";")[0];
      expect(await (await get(`service-auth.jwt=${fetched}`)).text()).toContain(
        `<span id="user">${user.username}</span>`,
      );
      // Neither: the sign-in form.
      expect(await (await get("other=1")).text()).toContain('id="sign-in"');
    });

    it("renders the sign-in form inert until the page hydrates: no native submit, no password in a URL", () =>
      expectSignInInertBeforeHydration(browser, site.url));

    it("signs up, out and in through the page's forms; a wrong password is refused", async () => {
      const email = `${example.emailPrefix}ui${++n}x${Date.now()}@example.com`;
      const username = email.split("@")[0];
      const page = await newPage();
      await page.goto(site.url);
      const form = page.locator("#sign-in");
      await form.locator("input[name=email]").fill(email);
      await form.locator("input[name=password]").fill(PASSWORD);
      await form.locator("button[value=sign-up]").click();
      await page.locator("#user", { hasText: username }).waitFor();
      await page.locator('#messages[data-live="true"]').waitFor({ state: "attached" });

      await page.locator("#sign-out").click();
      await page.locator("#sign-in").waitFor();
      const cookies = await page.context().cookies(site.url);
      expect(cookies.map((c) => c.name)).not.toContain("service-auth.session_token");
      // The server agrees: a reload renders the sign-in form.
      await page.reload();
      await page.locator("#sign-in").waitFor();

      await form.locator("input[name=email]").fill(email);
      await form.locator("input[name=password]").fill("wrong password!");
      await form.locator("button[value=sign-in]").click();
      await page.locator("#sign-in-error", { hasText: /invalid/i }).waitFor();

      await form.locator("input[name=password]").fill(PASSWORD);
      await form.locator("button[value=sign-in]").click();
      await page.locator("#user", { hasText: username }).waitFor();
      await page.locator('#messages[data-live="true"]').waitFor({ state: "attached" });
      const body = `after sign-in ${n}`;
      await page.locator("#send input[name=body]").fill(body);
      await page.locator("#send button").click();
      await page.locator("#messages li", { hasText: body }).waitFor();
    });

    it("a revocation from another device reaches the open page: it signs out", async () => {
      const user = await signUp();
      const page = await newPage(user.jar);
      await page.goto(site.url);
      await page.locator('#messages[data-live="true"]').waitFor({ state: "attached" });

      // The same user, elsewhere, ends all their sessions (Better Auth's revoke-sessions).
      const revoked = await user.user.send("POST", "/api/auth/revoke-sessions", {});
      expect(revoked.status).toBe(200);
      // A write anyone makes re-runs the page's subscription, which the backend now refuses.
      const other = await signUp();
      await send(`after revocation ${n}`, other.token);
      await page.locator("#sign-in").waitFor();
      expect(await page.locator("#messages").count()).toBe(0);
    });
  });
}
