/**
 * The example app's web UI in a real browser (Debian Chromium driven by playwright-core): two
 * users in separate browser contexts sign up through the page's forms and see each other's
 * messages live over the WebSocket; sign-out and an administrator's revocation switch a page
 * back to the sign-in forms and stop its live queries.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findChromium, TestBrowser } from "../helpers/chromium.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";

/** Screenshots for a person to look at after a run (the tests check the DOM, not pixels). */
const SCREENSHOT = "/tmp/e2e-signed-in.png";
const SCREENSHOT_SIGNED_OUT = "/tmp/e2e-signed-out.png";
/** Generous per-step wait: the first page load bundles the page script with esbuild. */
const STEP_TIMEOUT_MS = 15_000;

const chromiumPath = findChromium();

/** One user's browser: its own context (cookie jar) and page. */
interface UserPage {
  context: BrowserContext;
  page: Page;
}

// Each scenario signs up two users (password hashing) and waits on real pushes: allow for a busy CI machine.
describe.skipIf(!chromiumPath)("example web UI in Chromium", { timeout: 45_000 }, () => {
  let app: ExampleApp;
  let browser: TestBrowser;

  beforeAll(async () => {
    [app, browser] = await Promise.all([
      startExampleApp(),
      TestBrowser.launch(chromiumPath as string, STEP_TIMEOUT_MS),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  afterEach(async () => {
    expect(await browser.endTest()).toEqual([]);
  });

  async function openPage(): Promise<UserPage> {
    const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
    const page = await context.newPage();
    const user: UserPage = { context, page };
    await page.goto(app.url);
    await page.locator("#signed-out").waitFor({ state: "visible" });
    // Set once per page load: still there later means the page was never reloaded.
    await page.evaluate(() => {
      (window as unknown as { e2eLoaded: boolean }).e2eLoaded = true;
    });
    return user;
  }

  /** Waits until the element's whole text is `text`. */
  async function waitForText(page: Page, selector: string, text: string): Promise<void> {
    await page.waitForFunction(
      ([s, t]) => document.querySelector(s)?.textContent === t,
      [selector, text] as const,
      {
        timeout: STEP_TIMEOUT_MS,
      },
    );
  }

  async function signUp(page: Page, name: string, email: string): Promise<void> {
    const form = page.locator("#sign-up");
    await form.locator("input[name=name]").fill(name);
    await form.locator("input[name=email]").fill(email);
    await form.locator("input[name=password]").fill(PASSWORD);
    await form.locator("button").click();
    await expectSignedIn(page);
  }

  async function signIn(page: Page, email: string): Promise<void> {
    const form = page.locator("#sign-in");
    await form.locator("input[name=email]").fill(email);
    await form.locator("input[name=password]").fill(PASSWORD);
    await form.locator("button").click();
    await expectSignedIn(page);
  }

  async function expectSignedIn(page: Page): Promise<void> {
    await page.locator("#signed-in").waitFor({ state: "visible" });
    expect(await page.locator("#signed-out").isVisible()).toBe(false);
  }

  async function expectSignedOut(page: Page, timeout = STEP_TIMEOUT_MS): Promise<void> {
    await page.locator("#signed-out").waitFor({ state: "visible", timeout });
    expect(await page.locator("#signed-in").isVisible()).toBe(false);
    // Nothing of the signed-out user stays in the page.
    expect(await messageTexts(page)).toEqual([]);
    expect(await page.locator("#me-name").textContent()).toBe("");
  }

  async function send(page: Page, body: string): Promise<void> {
    const input = page.locator("#send input[name=body]");
    await input.fill(body);
    await input.press("Enter");
    // The form resets once the mutation resolved.
    await page.waitForFunction(
      () => (document.querySelector("#send input") as HTMLInputElement).value === "",
    );
  }

  /** Waits for the message `body` by `author` in the page's list. */
  async function waitForMessage(page: Page, author: string, body: string): Promise<void> {
    const item = page.locator("#messages li").filter({ hasText: body });
    await item.waitFor();
    expect(await item.locator("b").textContent()).toBe(author);
  }

  async function messageTexts(page: Page): Promise<string[]> {
    return page.locator("#messages li").allTextContents();
  }

  async function wasReloaded(page: Page): Promise<boolean> {
    return page.evaluate(() => !(window as unknown as { e2eLoaded?: boolean }).e2eLoaded);
  }

  it("shows messages live between two users in separate browsers", async () => {
    const alice = await openPage();
    await alice.page.screenshot({ path: SCREENSHOT_SIGNED_OUT });
    const bob = await openPage();
    await signUp(alice.page, "Alice Liddell", "alice@example.com");
    await signUp(bob.page, "Bob Builder", "bob@example.com");

    // Each page shows its own user; both see the live user count.
    await waitForText(alice.page, "#me-name", "Alice Liddell");
    await waitForText(alice.page, "#me-username", "alice");
    await waitForText(bob.page, "#me-name", "Bob Builder");
    await waitForText(bob.page, "#me-username", "bob");
    await waitForText(alice.page, "#user-count", "2");
    await waitForText(bob.page, "#user-count", "2");
    await waitForText(alice.page, "#connection", "open");

    await send(alice.page, "Hello from Alice");
    await waitForMessage(bob.page, "alice", "Hello from Alice");
    await send(bob.page, "Hi Alice, Bob here");
    await waitForMessage(alice.page, "bob", "Hi Alice, Bob here");

    for (const page of [alice.page, bob.page]) {
      expect(await messageTexts(page)).toEqual(["aliceHello from Alice", "bobHi Alice, Bob here"]);
      expect(await wasReloaded(page)).toBe(false);
    }

    // What a person sees: checked by eye after the run (and sanity-checked here).
    await send(alice.page, "Screenshots make the layout reviewable");
    await waitForMessage(alice.page, "alice", "Screenshots make the layout reviewable");
    await alice.page.screenshot({ path: SCREENSHOT, fullPage: true });
    const list = await alice.page.locator("#messages").boundingBox();
    expect(list?.height).toBeGreaterThan(60);
    expect(await alice.page.locator("#error").textContent()).toBe("");
  });

  it("stops a signed-out page's live queries and restores them on sign-in", async () => {
    const carol = await openPage();
    const dave = await openPage();
    await signUp(carol.page, "Carol", "carol@example.com");
    await signUp(dave.page, "Dave", "dave@example.com");
    await send(dave.page, "Before Carol left");
    await waitForMessage(carol.page, "dave", "Before Carol left");

    await carol.page.locator("#sign-out").click();
    await expectSignedOut(carol.page);
    // Her own sign-out: no "you were signed out" notice, and nothing she typed stays in the forms.
    expect(await carol.page.locator("#notice").textContent()).toBe("");
    for (const input of await carol.page.locator("#signed-out input").all())
      expect(await input.inputValue()).toBe("");

    await send(dave.page, "After Carol left");
    await waitForMessage(dave.page, "dave", "After Carol left");
    // A later commit the signed-out page still follows (the public user count): once it shows,
    // any update of the earlier message commit would have arrived before it.
    const countBefore = Number(await carol.page.locator("#user-count").textContent());
    await app.signUp("erin@example.com");
    await waitForText(carol.page, "#user-count", String(countBefore + 1));
    expect((await messageTexts(carol.page)).join("\n")).not.toContain("After Carol left");

    await signIn(carol.page, "carol@example.com");
    await waitForMessage(carol.page, "dave", "After Carol left");
    await waitForText(carol.page, "#me-username", "carol");
    expect(await wasReloaded(carol.page)).toBe(false);

    // Live again after signing back in.
    await send(dave.page, "Welcome back, Carol");
    await waitForMessage(carol.page, "dave", "Welcome back, Carol");
  });

  it("signs a page out when an administrator revokes its session", async () => {
    const frank = await openPage();
    const grace = await openPage();
    await signUp(frank.page, "Frank", "frank@example.com");
    await signUp(grace.page, "Grace", "grace@example.com");
    await send(frank.page, "Grace, can you read this?");
    await waitForMessage(grace.page, "frank", "Grace, can you read this?");

    // The administrator deletes every session of Grace's.
    const revoked = await app.backend.write(async (db) => {
      const user = await db
        .query("user")
        .withIndex("email", (q) => q.eq("email", "grace@example.com"))
        .unique();
      const sessions = await db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", user?._id))
        .collect();
      for (const session of sessions) await db.delete("session", session._id);
      return sessions.length;
    });
    expect(revoked).toBe(1);

    // The server pushes an auth error; the forced token refresh gets 401: signed out.
    await expectSignedOut(grace.page);
    // The page says why, in words for a person (not the raw "Session not found").
    expect(await grace.page.locator("#notice").textContent()).toBe(
      "You were signed out. Your session was ended (signed out elsewhere or by an administrator).",
    );
    expect(await wasReloaded(grace.page)).toBe(false);

    // Frank is unaffected and stays live; Grace's page no longer follows the messages.
    await send(frank.page, "Grace was signed out");
    await waitForMessage(frank.page, "frank", "Grace was signed out");
    const countBefore = Number(await grace.page.locator("#user-count").textContent());
    await app.signUp("heidi@example.com");
    await waitForText(grace.page, "#user-count", String(countBefore + 1));
    expect((await messageTexts(grace.page)).join("\n")).not.toContain("Grace was signed out");

    // Her password still works: signing in again starts a new session.
    await signIn(grace.page, "grace@example.com");
    await waitForMessage(grace.page, "frank", "Grace was signed out");
  });

  it("disables a form's button while its request is pending: a double-click signs up once, without an error", async () => {
    const ivan = await openPage();
    const form = ivan.page.locator("#sign-up");
    await form.locator("input[name=name]").fill("Ivan");
    await form.locator("input[name=email]").fill("ivan@example.com");
    await form.locator("input[name=password]").fill(PASSWORD);
    await form.locator("button").dblclick();
    await expectSignedIn(ivan.page);
    expect(await ivan.page.locator("#sign-up-error").textContent()).toBe("");
    // A failed sign-in shows its error beside its own form only.
    await ivan.page.locator("#sign-out").click();
    await expectSignedOut(ivan.page);
    await ivan.page.locator("#sign-in input[name=email]").fill("ivan@example.com");
    await ivan.page.locator("#sign-in input[name=password]").fill("wrong password");
    await ivan.page.locator("#sign-in button").click();
    await ivan.page.waitForFunction(() => document.querySelector("#sign-in-error")?.textContent !== "");
    expect(await ivan.page.locator("#sign-up-error").textContent()).toBe("");
  });

  it("serves a favicon", async () => {
    const res = await fetch(`${app.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml");
    expect(await res.text()).toContain("<svg");
  });
});
