/**
 * Finds and launches Debian's Chromium for the browser tests (playwright-core downloads no
 * browser). Without Chromium the tests are skipped with a loud message, except on CI
 * (`CI=true`), where a missing browser must fail the run rather than hide the tests.
 * {@link TestBrowser} is the scaffolding every browser test shares: contexts with the step
 * timeout, closed after each test, whose pages' uncaught errors fail it.
 */
import { existsSync } from "node:fs";
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium } from "playwright-core";

/** Where Debian's `chromium` package puts the browser; `CHROMIUM_PATH` overrides it. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * The machine is offline: these flags keep Chromium from trying connections (updates, sync,
 * field trials, QUIC probes) that would only be blocked.
 */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const INSTALL_HINT =
  "Install it with `apt-get update && apt-get install -y chromium` (Debian) or point CHROMIUM_PATH at a Chromium binary.";

/**
 * The Chromium binary to use, or undefined when there is none (after printing why the browser
 * tests are skipped). Throws when `CI=true`: CI must run the browser tests.
 */
export function findChromium(): string | undefined {
  const path = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  if (existsSync(path)) return path;
  const problem = `Chromium not found at ${path}. ${INSTALL_HINT}`;
  if (process.env.CI === "true")
    throw new Error(`${problem} (CI=true: the browser tests must run, not be skipped)`);
  const bar = "!".repeat(78);
  console.warn(`\n${bar}\n!! SKIPPING BROWSER TESTS: ${problem}\n${bar}\n`);
  return undefined;
}

/** Launches headless Chromium from `executablePath` with the offline-friendly flags. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}

/** A launched Chromium whose contexts record their pages' uncaught errors. */
export class TestBrowser {
  private contexts: { context: BrowserContext; errors: string[] }[] = [];

  private constructor(
    readonly browser: Browser,
    private readonly stepTimeoutMs: number,
  ) {}

  /** Launches Chromium from `executablePath`; every context's steps wait at most `stepTimeoutMs`. */
  static async launch(executablePath: string, stepTimeoutMs: number): Promise<TestBrowser> {
    return new TestBrowser(await launchChromium(executablePath), stepTimeoutMs);
  }

  /** A new context (its own cookie jar); closed by {@link endTest}. */
  async newContext(options?: BrowserContextOptions): Promise<BrowserContext> {
    const context = await this.browser.newContext(options);
    context.setDefaultTimeout(this.stepTimeoutMs);
    const errors: string[] = [];
    context.on("page", (page) => page.on("pageerror", (error) => errors.push(error.message)));
    this.contexts.push({ context, errors });
    return context;
  }

  /**
   * Closes the contexts opened since the last call and returns the uncaught exceptions and
   * unhandled rejections of their pages: bugs whatever the scenario, so callers expect none.
   */
  async endTest(): Promise<string[]> {
    const ended = this.contexts;
    this.contexts = [];
    await Promise.all(ended.map(({ context }) => context.close()));
    return ended.flatMap(({ errors }) => errors);
  }

  close(): Promise<void> {
    return this.browser.close();
  }
}
