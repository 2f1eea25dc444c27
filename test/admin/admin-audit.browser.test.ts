/**
 * The admin console's audit trail in Chromium: events appear live as they happen (a failed
 * sign-in made over HTTP shows up without a reload), and the user, type and time filters narrow
 * the list. Screenshot in test-results/admin/.
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

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)("admin console: audit trail in Chromium", { timeout: 90_000 }, () => {
  let app: ExampleApp;
  let browser: TestBrowser;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [app, browser] = await Promise.all([
      startExampleApp(),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
    ]);
    await app.signUp("admin@example.com", PASSWORD, "Ada Admin");
    await app.makeAdmin("admin@example.com");
    await app.signUp("carol@example.com", PASSWORD, "Carol");
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  afterEach(async () => {
    expect(await browser.endTest()).toEqual([]);
  });

  async function openConsole(): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
    await page.goto(`${app.url}/admin`);
    await page.locator("#sign-in input[name=email]").fill("admin@example.com");
    await page.locator("#sign-in input[name=password]").fill(PASSWORD);
    await page.locator("#sign-in button").click();
    await page.waitForSelector("body[data-view=console]");
    await page.locator("#audit li.event").first().waitFor();
    return page;
  }

  /** The event types the list shows now, in order. */
  const shownTypes = (page: Page) =>
    page.$$eval("#audit li.event", (items) => items.map((li) => li.getAttribute("data-event-type")));

  it("shows events live and filters them by user, type and time", async () => {
    const page = await openConsole();
    // The console's own sign-in is there, with the browser's address and user agent.
    await page.waitForFunction(() =>
      [...document.querySelectorAll("#audit li.event[data-event-type=sign-in]")].some((li) =>
        li.textContent?.includes("HeadlessChrome"),
      ),
    );

    // Live: a failed sign-in made elsewhere appears at the top without a reload.
    const wrong = await app.browser().post("/api/auth/sign-in/email", {
      email: "carol@example.com",
      password: "wrong password here",
    });
    expect(wrong.status).toBe(401);
    await page.waitForFunction(
      () => document.querySelector("#audit li.event")?.getAttribute("data-event-type") === "sign-in.failed",
    );
    const top = await page.locator("#audit li.event").first().textContent();
    expect(top).toContain("carol@example.com");
    expect(top).toContain("INVALID_EMAIL_OR_PASSWORD");
    expect(top).not.toContain("wrong password here");
    await page.screenshot({ path: join(SCREENSHOTS, "console-audit.png"), fullPage: true });

    // By type.
    await page.locator("#audit-type").selectOption("sign-up");
    await page.waitForFunction(() => {
      const items = [...document.querySelectorAll("#audit li.event")];
      return items.length === 2 && items.every((li) => li.getAttribute("data-event-type") === "sign-up");
    });

    // By user (email), all types: only Carol's events.
    await page.locator("#audit-type").selectOption("");
    await page.locator("#audit-user").fill("carol@example.com");
    await page.waitForFunction(() => {
      const items = [...document.querySelectorAll("#audit li.event")];
      return items.length > 0 && items.every((li) => li.textContent?.includes("carol@example.com") || false);
    });
    const carols = await shownTypes(page);
    expect(carols).toContain("sign-up");
    expect(carols).toContain("sign-in.failed");
    expect(carols).not.toContain("role.changed");

    // By time: an hour's window still has them; and an unknown user has none.
    await page.locator("#audit-since").selectOption("3600");
    await page.waitForFunction(() => document.querySelectorAll("#audit li.event").length > 0);
    await page.locator("#audit-user").fill("nobody@example.com");
    await page.waitForFunction(
      () =>
        document.querySelectorAll("#audit li.event").length === 0 &&
        document.querySelector("#audit-status")?.textContent === "No events match.",
    );
  });
});
