/**
 * The Next.js App Router example (examples/nextjs, `next build && next start`) in Chromium, against
 * the example app's backend on another port: the server renders the signed-in user's messages
 * with the request's JWT, the page hydrates without a loading state and goes live over the
 * backend's WebSocket; sign-up, sign-in and sign-out go through the `/api/auth` route handler.
 * The page is styled, a 2,000-character word wraps on a phone (390 px) and a laptop (1280 px), and
 * a short password's error names the server's minimum. Screenshots go to test-results/nextjs/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { app, internal } from "../../examples/app/app.ts";
import { api } from "../../examples/nextjs/lib/api.ts";
import { ensureAuthEnv } from "../../src/auth/keys/auth-env.ts";
import { fetchMutation } from "../../src/client/server-rendering.ts";
import { browserAt, type FixtureBrowser, freePort } from "../helpers/browser.ts";
import { findChromium, launchChromium } from "../helpers/chromium.ts";
import { expectSignInInertBeforeHydration } from "../helpers/framework-example-scenarios.ts";
import { ROOT } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { buildExample, type NextServer, startExample } from "./next-example.ts";

const PASSWORD = "correct horse battery";
/** Per browser step: a production Next server answers fast, but the machine may be loaded. */
const STEP_TIMEOUT_MS = 20_000;
const SCREENSHOTS = join(ROOT, "test-results/nextjs");
/** The longest message the example accepts (examples/app/messages.ts), as one word. */
const LONG_WORD = "w".repeat(2000);

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)("Next.js App Router example in Chromium", { timeout: 90_000 }, () => {
  let backend: TestService;
  let next: NextServer;
  let browser: Browser;
  let n = 0;
  const contexts: { context: BrowserContext; errors: string[] }[] = [];

  // `next build` takes a minute or more on a loaded machine (skipped when the sources are unchanged).
  beforeAll(async () => {
    const nextPort = await freePort();
    const siteUrl = `http://localhost:${nextPort}`;
    const [, service, chromium] = await Promise.all([
      buildExample(),
      startTestService({
        ...app,
        envDefaults: { SITE_URL: siteUrl },
        prepare: async (b) => void (await ensureAuthEnv(b, internal.auth.getLatestJwks)),
      }),
      launchChromium(chromiumPath as string),
    ]);
    backend = service;
    browser = chromium;
    next = await startExample(nextPort, backend.url);
    expect(next.url).toBe(siteUrl);
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await next?.stop();
    await backend?.close();
  });

  afterEach(async () => {
    // Uncaught errors, React's console errors (hydration mismatches) and 5xx answers are bugs in any scenario.
    const errors = contexts.flatMap((c) => c.errors);
    await Promise.all(contexts.splice(0).map((c) => c.context.close()));
    expect(errors).toEqual([]);
  });

  async function newPage(cookies: FixtureBrowser["jar"] | null = null, width = 1280): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const errors: string[] = [];
    contexts.push({ context, errors });
    if (cookies) {
      await context.addCookies([...cookies.cookies].map(([name, value]) => ({ name, value, url: next.url })));
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

  /** Signs a user up through the Next app's `/api/auth` route handler; returns their cookies and JWT. */
  async function signUp() {
    const email = `next${++n}x${Date.now()}@example.com`;
    const user = browserAt(next.url);
    const res = await user.send("POST", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "N" });
    expect(res.status).toBe(200);
    const token = user.jar.get("service-auth.jwt");
    expect(token).toBeTruthy();
    return { email, jar: user.jar, token: token as string, username: email.split("@")[0] };
  }

  const send = (body: string, token: string) =>
    fetchMutation(api.messages.send, { body }, { url: backend.url, token });

  const messageTexts = (page: Page) => page.locator("#messages li").allTextContents();

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

    const response = await page.goto(next.url);
    const html = await response!.text();
    // Server-rendered: the HTML itself has the user's name and the messages.
    expect(html).toContain(user.username);
    expect(html).toContain(first);
    expect(html).toContain(second);

    await page.locator('#messages[data-live="true"]').waitFor({ state: "attached" });
    expect(sockets.some((url) => url.startsWith(`${backend.url.replace("http", "ws")}/api/sync`))).toBe(true);
    // One page, one socket (a render React discarded must not leave one behind).
    expect(sockets.filter((url) => url.includes("/api/sync"))).toHaveLength(1);

    // Live: a message sent elsewhere appears without a reload, and so does one sent from the page.
    const third = `third ${n}`;
    await send(third, user.token);
    await page.locator("#messages li", { hasText: third }).waitFor();
    const fourth = `fourth ${n}`;
    await page.locator("#send input[name=body]").fill(fourth);
    await page.locator("#send button").click();
    await page.locator("#messages li", { hasText: fourth }).waitFor();
    const texts = await messageTexts(page);
    expect(texts.filter((t) => [first, second, third, fourth].some((m) => t.endsWith(m)))).toHaveLength(4);

    // No loading flash: once the list showed the server's messages it never lost them.
    const seen = await page.evaluate(() => (window as unknown as { seen: (string | null)[] }).seen);
    const shown = seen.findIndex((text) => text?.includes(first) && text.includes(second));
    expect(shown).toBeGreaterThanOrEqual(0);
    expect(seen.slice(shown).filter((text) => !(text?.includes(first) && text.includes(second)))).toEqual([]);
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
  });

  it("renders signed in from the JWT cookie alone, and from the session cookie alone (requirements §1.9)", async () => {
    const user = await signUp();
    const page = (cookie: string) => fetch(next.url, { headers: { cookie } }).then((r) => r.text());
    // Fresh JWT, no session cookie: the cached token is used (the token endpoint would refuse).
    const jwtOnly = await page(`service-auth.jwt=${user.token}`);
    expect(jwtOnly).toContain(`<span id="user">${user.username}</span>`);
    // Session cookie, no JWT: one is fetched from the token endpoint.
    const sessionOnly = await page(
      `service-auth.session_token=${user.jar.get("service-auth.session_token")}`,
    );
    expect(sessionOnly).toContain(`<span id="user">${user.username}</span>`);
    // Neither: the sign-in form.
    expect(await page("other=1")).toContain('id="sign-in"');
  });

  it("renders the sign-in form inert until the page hydrates: no native submit, no password in a URL", () =>
    expectSignInInertBeforeHydration(browser, next.url));

  it("signs up, out and in through the page's forms; a wrong password is refused", async () => {
    const email = `nextui${++n}x${Date.now()}@example.com`;
    const username = email.split("@")[0];
    const page = await newPage();
    await page.goto(next.url);
    const form = page.locator("#sign-in");
    await form.locator("input[name=email]").fill(email);
    await form.locator("input[name=password]").fill(PASSWORD);
    await form.locator("button[value=sign-up]").click();
    await page.locator("#user", { hasText: username }).waitFor();
    await page.locator('#messages[data-live="true"]').waitFor({ state: "attached" });

    await page.locator("#sign-out").click();
    await page.locator("#sign-in").waitFor();
    const cookies = await page.context().cookies(next.url);
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

  it.each([390, 1280])("is styled, and a 2,000-character word wraps at %i px", async (width) => {
    const user = await signUp();
    await send(LONG_WORD, user.token);
    const page = await newPage(user.jar, width);
    await page.goto(next.url);
    // Each width's test sends its own long word; either one in the list checks the wrapping.
    await page.locator("#messages li", { hasText: LONG_WORD }).first().waitFor();
    const layout = await page.evaluate(() => ({
      viewport: window.innerWidth,
      scrollWidth: document.documentElement.scrollWidth,
      bodyMaxWidth: getComputedStyle(document.body).maxWidth,
      signOutRadius: getComputedStyle(document.getElementById("sign-out") as HTMLElement).borderTopLeftRadius,
    }));
    expect(layout.viewport).toBe(width);
    expect(layout.scrollWidth).toBeLessThanOrEqual(width);
    // The example's stylesheet is applied (globals.css: a 40rem column, rounded buttons).
    expect(layout.bodyMaxWidth).toBe("640px");
    expect(layout.signOutRadius).toBe("6px");
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `long-word-${width}.png`) });
  });

  it("a short password's sign-up error names the server's minimum", async () => {
    const page = await newPage(null, 390);
    await page.goto(next.url);
    const form = page.locator("#sign-in");
    await form.locator("input[name=email]").fill(`short${++n}x${Date.now()}@example.com`);
    await form.locator("input[name=password]").fill("short");
    await form.locator("button[value=sign-up]").click();
    await page
      .locator("#sign-in-error", { hasText: "Password too short: use at least 8 characters" })
      .waitFor();
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, "sign-up-short-password.png") });
  });
});
