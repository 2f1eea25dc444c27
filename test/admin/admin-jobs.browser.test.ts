/**
 * The admin console's live Scheduled jobs panel in Chromium: a sign-up's verification email is a
 * job of the mail outbox; the panel shows it running while a slow SMTP server holds it, then done
 * once the server answers, without a reload; an attempt the mail server refuses shows as failed
 * with its error. Real SMTP server, real example app. Screenshot in test-results/admin/.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findChromium, TestBrowser } from "../helpers/chromium.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { ROOT } from "../helpers/process.ts";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.ts";

const SCREENSHOTS = join(ROOT, "test-results/admin");
/** Generous per-step wait: the first page load bundles the page scripts with esbuild. */
const STEP_TIMEOUT_MS = 20_000;

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath)("admin console: live scheduled jobs in Chromium", { timeout: 120_000 }, () => {
  let app: ExampleApp;
  let browser: TestBrowser;
  let slow: TestSmtpServer;
  let refusing: TestSmtpServer;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [app, browser, slow, refusing] = await Promise.all([
      startExampleApp(),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
      startSmtpServer({ stall: true }),
      startSmtpServer({ refuse: true }),
    ]);
    await app.backend.env.set("MAIL_FROM", "Example <no-reply@example.com>");
    await app.signUp("admin@example.com", PASSWORD, "Ada Admin");
    await app.makeAdmin("admin@example.com");
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await slow?.close();
    await refusing?.close();
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
    await page.locator("#console-nav a[data-tab=jobs]").click();
    await page.locator("#jobs-panel").waitFor({ state: "visible" });
    return page;
  }

  /** The id of the newest `mail:deliver` job the panel lists once it is in `state`. */
  const newestMailJobIn = (page: Page, state: string) =>
    page
      .waitForFunction((wanted) => {
        const job = [...document.querySelectorAll("#jobs li.job")].find(
          (li) => li.querySelector("code")?.textContent === "mail:deliver",
        );
        return job?.getAttribute("data-job-state") === wanted ? job.getAttribute("data-job-id") : false;
      }, state)
      .then((handle) => handle.jsonValue() as Promise<string>);

  it("shows a verification email's job running while SMTP is slow, then done, live; a refused attempt failed with its error", async () => {
    const admin = await openConsole();
    await admin
      .locator("#jobs-status")
      .filter({ hasText: /job\(s\)|No jobs/ })
      .waitFor();

    await app.backend.env.set("SMTP_URL", slow.url);
    await app.signUp("pat@example.com", PASSWORD, "Pat");
    const running = await newestMailJobIn(admin, "running");
    expect(slow.count("pat@example.com")).toBe(0);
    const row = admin.locator(`#jobs li[data-job-id="${running}"]`);
    expect(await row.locator(".badge").textContent()).toBe("running");
    // Released at once: the SMTP client gives up on a greeting after 10 s.
    slow.release();
    await admin.waitForFunction(
      (id) =>
        document.querySelector(`#jobs li[data-job-id="${id}"]`)?.getAttribute("data-job-state") === "done",
      running,
    );
    expect(slow.count("pat@example.com")).toBe(1);
    expect(await row.locator(".badge").textContent()).toBe("done");
    await admin.screenshot({ path: join(SCREENSHOTS, "console-jobs.png"), fullPage: true });

    await app.backend.env.set("SMTP_URL", refusing.url);
    await app.signUp("quinn@example.com", PASSWORD, "Quinn");
    await admin.locator("#jobs-state").selectOption("failed");
    const failed = await newestMailJobIn(admin, "failed");
    const error = await admin.locator(`#jobs li[data-job-id="${failed}"] .job-error`).textContent();
    expect(error).toMatch(/^Not sent \(attempt \d+ of 12; next in \d+ ms\): .*550/);
    // Only failed jobs are listed now.
    const states = await admin.$$eval("#jobs li.job", (items) =>
      items.map((li) => li.getAttribute("data-job-state")),
    );
    expect(new Set(states)).toEqual(new Set(["failed"]));
    await admin.screenshot({ path: join(SCREENSHOTS, "console-jobs-failed.png"), fullPage: true });
    // The retries would go on in the background: point mail back at the development outbox.
    await app.backend.env.remove("SMTP_URL");
  });
});
