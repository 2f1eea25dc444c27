/**
 * The page `service-auth init` writes, in Chromium: sign up through its form, add a note, see it
 * in the live list; sign out and the notes are gone from the page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, TestBrowser } from "../helpers/chromium.ts";
import { type ExampleServer, spawnStart } from "../helpers/example-server.ts";
import { initApp } from "../helpers/init-app.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const chromiumPath = findChromium();
const STEP_TIMEOUT_MS = 20_000;

describe.skipIf(!chromiumPath)(
  "the page of a new app, in Chromium",
  { timeout: PROCESS_TEST_TIMEOUT },
  () => {
    let server: ExampleServer;
    let browser: TestBrowser;

    beforeAll(async () => {
      const dir = await initApp("app");
      [server, browser] = await Promise.all([
        spawnStart(["start"], { DATABASE_URL: tempDatabaseFile() }, { cwd: dir }),
        TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
      ]);
    }, PROCESS_TEST_TIMEOUT);
    afterAll(async () => {
      await browser?.close();
      await server?.stop();
    });

    it("signs up, adds a note that shows in the live list, and signs out", async () => {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.url}/`);
      await page.locator("#sign-in input[name=email]").fill("ann@example.com");
      await page.locator("#sign-in input[name=password]").fill("correct horse battery");
      await page.locator("#sign-in button[name=up]").click();
      await page.locator("#add input[name=body]").fill("buy milk");
      await page.locator("#add button").click();
      await expect.poll(() => page.locator("#list li").allTextContents()).toEqual(["buy milk"]);
      await page.locator("#sign-out").click();
      await page.locator("#sign-in").waitFor({ state: "visible" });
      expect(await page.locator("#notes").isHidden()).toBe(true);
      expect(await browser.endTest()).toEqual([]);
    });
  },
);
