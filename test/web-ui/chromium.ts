/**
 * Finds and launches Debian's Chromium for the browser tests (playwright-core downloads no
 * browser). Without Chromium the tests are skipped with a loud message, except on CI
 * (`CI=true`), where a missing browser must fail the run rather than hide the tests.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

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
  console.warn(`\n${bar}\n!! SKIPPING BROWSER TESTS (test/web-ui): ${problem}\n${bar}\n`);
  return undefined;
}

/** Launches headless Chromium from `executablePath` with the offline-friendly flags. */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
}
