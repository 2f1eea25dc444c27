/**
 * The admin console's live connections in Chromium: a signed-in user's open page shows up under
 * its session (address, browser, subscriptions), "Disconnect" closes that page's WebSocket (4010)
 * and the page reconnects by itself and stays signed in, and the list follows. Screenshot in
 * test-results/admin/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findChromium, TestBrowser } from "../helpers/chromium.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { ROOT } from "../helpers/process.ts";

const SCREENSHOTS = join(ROOT, "test-results/admin");
/** Generous per-step wait: the first page load bundles the page scripts with esbuild. */
const STEP_TIMEOUT_MS = 20_000;
const DISCONNECTED = 4010;

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)("admin console: live connections in Chromium", { timeout: 90_000 }, () => {
  let app: ExampleApp;
  let browser: TestBrowser;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [app, browser] = await Promise.all([
      startExampleApp({ sync: { presence: { intervalMs: 100 } } }),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
    ]);
    await app.signUp("admin@example.com", PASSWORD, "Ada Admin");
    await app.makeAdmin("admin@example.com");
    await app.signUp("gina@example.com", PASSWORD, "Gina");
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  afterEach(async () => {
    expect(await browser.endTest()).toEqual([]);
  });

  /** Gina's app page, signed in, recording the close codes of its WebSockets. */
  async function userPage(): Promise<Page> {
    const context = await browser.newContext();
    await context.addInitScript(() => {
      const closes: number[] = [];
      (window as unknown as { wsCloses: number[] }).wsCloses = closes;
      const Native = window.WebSocket;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          this.addEventListener("close", (event) => closes.push(event.code));
        }
      } as typeof WebSocket;
    });
    const page = await context.newPage();
    await page.goto(app.url);
    await page.locator("#sign-in input[name=email]").fill("gina@example.com");
    await page.locator("#sign-in input[name=password]").fill(PASSWORD);
    await page.locator("#sign-in button").click();
    await page.locator("#signed-in").waitFor({ state: "visible" });
    return page;
  }

  async function openConsole(): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    await page.goto(`${app.url}/admin`);
    await page.locator("#sign-in input[name=email]").fill("admin@example.com");
    await page.locator("#sign-in input[name=password]").fill(PASSWORD);
    await page.locator("#sign-in button").click();
    await page.waitForSelector("body[data-view=console]");
    await page.locator("#search-input").fill("gina@example.com");
    await page.waitForFunction(() => document.querySelectorAll(".user-row").length === 1);
    await page.locator(".user-row").first().click();
    await page.locator("#user-panel").waitFor({ state: "visible" });
    return page;
  }

  const connectionIds = (page: Page) =>
    page.$$eval("#sessions li.connection", (items) =>
      items.map((li) => li.getAttribute("data-connection-id")),
    );

  it("lists a page's connection under its session; Disconnect closes it and the page reconnects", async () => {
    const user = await userPage();
    const admin = await openConsole();
    const live = admin
      .locator("#sessions li[data-session-id]")
      .filter({ has: admin.locator("li.connection") });
    await live.first().waitFor();
    expect(await live.count()).toBe(1);
    const line = await live.locator("li.connection").first().textContent();
    expect(line).toContain("127.0.0.1");
    // The browser in words, as the session rows name it (session-facts.ts).
    expect(line).toContain("Headless Chrome");
    expect(line).toMatch(/\d+ subscription\(s\)/);
    expect(await live.locator(".live-count").textContent()).toBe("1 live connection(s)");
    const [before] = await connectionIds(admin);
    await admin.screenshot({ path: join(SCREENSHOTS, "console-connections.png"), fullPage: true });

    await live.locator("button.disconnect").click();
    await admin.waitForFunction(
      () =>
        document.querySelector("#user-status")?.textContent ===
        "Live connections closed; the session stays signed in.",
    );
    await user.waitForFunction((code) => (window as any).wsCloses.includes(code), DISCONNECTED);
    // The page reconnected by itself: a new connection is listed, and it is still signed in.
    await admin.waitForFunction((old) => {
      const ids = [...document.querySelectorAll("#sessions li.connection")].map((li) =>
        li.getAttribute("data-connection-id"),
      );
      return ids.length === 1 && ids[0] !== old;
    }, before);
    expect(await user.locator("#signed-in").isVisible()).toBe(true);
    expect(await user.locator("#signed-out").isVisible()).toBe(false);
  });
});
