/**
 * How the example's web UI reads, in a real browser (Debian Chromium driven by playwright-core):
 * a 2,000-character word wraps instead of widening the page, on a phone (390 px) and a laptop
 * (1280 px); the header says what it counts ("2 users signed up · live connection open"); a
 * short password's error names the server's minimum. Screenshots go to test-results/web-ui/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findChromium, TestBrowser } from "../helpers/chromium.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { ROOT } from "../helpers/process.ts";

const SCREENSHOTS = join(ROOT, "test-results/web-ui");
/** Generous per-step wait: the first page load bundles the page script with esbuild. */
const STEP_TIMEOUT_MS = 20_000;
/** The longest message the example accepts (messages.ts), as one word. */
const LONG_WORD = "w".repeat(2000);

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)("example web UI screens in Chromium", { timeout: 60_000 }, () => {
  let app: ExampleApp;
  let browser: TestBrowser;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [app, browser] = await Promise.all([
      startExampleApp(),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
    ]);
    // The long word is in the list before any page opens: every page shows it.
    const { token } = await app.signUp("longword@example.com", PASSWORD, "Long Word");
    expect((await app.call("mutation", "messages:send", { body: LONG_WORD }, token)).status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  afterEach(async () => {
    expect(await browser.endTest()).toEqual([]);
  });

  async function signedInPage(width: number, email: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 800 } });
    const page = await context.newPage();
    await page.goto(app.url);
    const form = page.locator("#sign-up");
    await form.locator("input[name=name]").fill(`User ${width}`);
    await form.locator("input[name=email]").fill(email);
    await form.locator("input[name=password]").fill(PASSWORD);
    await form.locator("button").click();
    await page.locator("#signed-in").waitFor({ state: "visible" });
    await page.locator("#messages li", { hasText: LONG_WORD }).waitFor();
    return page;
  }

  /** The page's width and its widest content, and how tall the long message is. */
  const layout = (page: Page) =>
    page.evaluate(() => {
      const long = [...document.querySelectorAll("#messages li")].find((li) =>
        li.textContent?.includes("w".repeat(2000)),
      ) as HTMLElement;
      return {
        viewport: window.innerWidth,
        scrollWidth: document.documentElement.scrollWidth,
        longHeight: long.getBoundingClientRect().height,
      };
    });

  // First: the app has exactly one user (the long word's author) until this test signs up.
  it("says in words what the header counts, in the singular for one", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    await page.goto(app.url);
    const statusLine = (text: string) =>
      page.waitForFunction((t) => document.querySelector("#status-line")?.textContent === t, text);
    await statusLine("1 user signed up · live connection open");
    const form = page.locator("#sign-up");
    await form.locator("input[name=name]").fill("Header Reader");
    await form.locator("input[name=email]").fill("header@example.com");
    await form.locator("input[name=password]").fill(PASSWORD);
    await form.locator("button").click();
    await page.locator("#signed-in").waitFor({ state: "visible" });
    await statusLine("2 users signed up · live connection open");
    await page.screenshot({ path: join(SCREENSHOTS, "header-390.png") });
  });

  it.each([390, 1280])(
    "a 2,000-character word wraps at %i px: nothing wider than the screen",
    async (width) => {
      const page = await signedInPage(width, `wrap${width}@example.com`);
      const { viewport, scrollWidth, longHeight } = await layout(page);
      expect(viewport).toBe(width);
      expect(scrollWidth).toBeLessThanOrEqual(width);
      // Wrapped onto many lines, not clipped to one.
      expect(longHeight).toBeGreaterThan(100);
      await page.screenshot({ path: join(SCREENSHOTS, `long-word-${width}.png`) });
    },
  );

  it("a short password's error names the server's minimum", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const page = await context.newPage();
    await page.goto(app.url);
    const form = page.locator("#sign-up");
    await form.locator("input[name=name]").fill("Shorty");
    await form.locator("input[name=email]").fill("shorty@example.com");
    await form.locator("input[name=password]").fill("short");
    // The browser's own check would stop a 5-character password: let the server answer.
    await form.evaluate((f) => (f as HTMLFormElement).setAttribute("novalidate", ""));
    await form.locator("button").click();
    await page
      .locator("#sign-up-error", { hasText: "Password too short: use at least 8 characters" })
      .waitFor();
  });
});
