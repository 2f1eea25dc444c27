/**
 * The admin console's audit trail in Chromium, reached through the console's navigation: events
 * appear live as they happen (a failed sign-in made over HTTP shows up without a reload), read like
 * the session rows (browser and OS in words, details as labelled fields with dates), and the user,
 * type and time filters narrow the list. Screenshot in test-results/admin/.
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
    // Reached through the navigation: the users panel gives way to the audit trail.
    await page.locator("#console-nav a[data-tab=audit]").click();
    await page.locator("#audit li.event").first().waitFor();
    expect(new URL(page.url()).hash).toBe("#/audit");
    expect(await page.locator("#users-panel").isVisible()).toBe(false);
    expect(await page.locator("#console-nav a[aria-current=page]").textContent()).toBe("Audit");
    return page;
  }

  /** The event types the list shows now, in order. */
  const shownTypes = (page: Page) =>
    page.$$eval("#audit li.event", (items) => items.map((li) => li.getAttribute("data-event-type")));

  it("shows events live and filters them by user, type and time", async () => {
    const page = await openConsole();
    // The console's own sign-in is there, its browser and OS in words (the raw user agent in the
    // tooltip) and its address, as a session row says them.
    await page.waitForFunction(() =>
      [...document.querySelectorAll("#audit li.event[data-event-type=sign-in]")].some((li) =>
        li.querySelector(".client")?.getAttribute("title")?.includes("HeadlessChrome"),
      ),
    );
    const own = page
      .locator("#audit li.event[data-event-type=sign-in]")
      .filter({ hasText: "Headless Chrome" });
    expect(await own.first().locator(".facts").textContent()).toMatch(
      /^Headless Chrome \d+ on Linux · this machine \(127\.0\.0\.1\) · (just now|\d+ minutes? ago)$/,
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
    // Details as labelled fields, not JSON: "Reason" and "HTTP status" with their values.
    const fields = await page
      .locator("#audit li.event")
      .first()
      .locator("dl.fields")
      .evaluate((dl) =>
        [...dl.querySelectorAll("dt")].map(
          (dt) => `${dt.textContent}: ${dt.nextElementSibling?.textContent}`,
        ),
      );
    expect(fields).toEqual([
      "Through: /sign-in/email",
      "Reason: INVALID_EMAIL_OR_PASSWORD",
      "HTTP status: 401",
    ]);
    expect(top).not.toMatch(/[{}"]/);
    expect(await page.locator("#audit li.event").first().locator(".facts").textContent()).toMatch(
      /^Node\.js · /,
    );

    // A ban's end is a date, not epoch milliseconds.
    const ends = Date.now() + 7 * 24 * 3600_000;
    await app.backend.runMutation(
      "audit:record",
      { type: "user.banned", email: "carol@example.com", details: { reason: "spam", expires: ends } },
      { allowInternal: true },
    );
    const banned = page.locator("#audit li.event[data-event-type='user.banned']").first();
    await banned.waitFor();
    const banText = (await banned.locator("dl.fields").textContent()) ?? "";
    expect(banText).toContain("Reasonspam");
    expect(banText).toMatch(/Expiresin 7 days \(.*\d{4}.*\)/);
    expect(banText).not.toContain(String(ends));
    expect(await banned.locator(".parties").textContent()).toContain("carol@example.com");
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
