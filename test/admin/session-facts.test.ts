/**
 * The console's words for a session row (examples/app/admin/console/session-facts.ts): browser
 * and OS named from real user agents, loopback addresses called "this machine", times relative to
 * now. The Chromium test (admin-console.browser.test.ts) checks them on the page.
 */
import { describe, expect, it } from "vitest";
import {
  addressText,
  clientName,
  clientText,
  isLoopback,
  relativeTime,
} from "../../examples/app/admin/console/session-facts.ts";

describe("clientText", () => {
  it.each([
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
      "Chrome 120 on macOS",
    ],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15",
      "Safari 17 on macOS",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1",
      "Safari 17 on iOS 17",
    ],
    [
      "Mozilla/5.0 (iPad; CPU OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
      "Safari 17 on iPadOS",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1",
      "Chrome 120 on iOS 17",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/120.0 Mobile/15E148 Safari/605.1.15",
      "Firefox 120 on iOS 17",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0",
      "Firefox 121 on Windows",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91",
      "Edge 120 on Windows",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 OPR/106.0.0.0",
      "Opera 106 on Windows",
    ],
    [
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36",
      "Chrome 120 on Android 14",
    ],
    [
      "Mozilla/5.0 (Linux; Android 13; SM-S901B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36",
      "Samsung Internet 23 on Android 13",
    ],
    [
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
      "Chrome 120 on ChromeOS",
    ],
    [
      "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
      "Firefox 121 on Linux",
    ],
    [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
      "Headless Chrome 156 on Linux",
    ],
    ["curl/8.5.0", "curl 8.5"],
    ["node", "Node.js"],
    ["Go-http-client/1.1", "Go-http-client"],
    ["Mozilla/5.0 (Windows NT 10.0) Unheard/1.0", "Unknown browser on Windows"],
    ["Mozilla/5.0", "Unknown browser"],
    ["", "Unknown browser"],
    [null, "Unknown browser"],
  ])("%s → %s", (userAgent, expected) => {
    expect(clientText(userAgent)).toBe(expected);
  });

  it("reads a bounded prefix of a huge user agent and names at most 40 characters of an unknown client", () => {
    expect(clientName(`${"x".repeat(10_000)} Chrome/120`)).toEqual({ browser: "x".repeat(40), os: "" });
  });
});

describe("addressText", () => {
  it("calls loopback addresses this machine, keeping the address", () => {
    for (const address of ["::1", "127.0.0.1", "127.1.2.3", "::ffff:127.0.0.1"]) {
      expect(isLoopback(address)).toBe(true);
      expect(addressText(address)).toBe(`this machine (${address})`);
    }
  });

  it("shows other addresses as they are, and says when there is none", () => {
    for (const address of ["203.0.113.7", "2001:db8::1", "::ffff:10.0.0.1", "1127.0.0.1"]) {
      expect(isLoopback(address)).toBe(false);
      expect(addressText(address)).toBe(address);
    }
    expect(addressText(null)).toBe("unknown address");
    expect(addressText("")).toBe("unknown address");
  });
});

describe("relativeTime", () => {
  const now = Date.UTC(2026, 0, 15, 12, 0, 0);
  const minute = 60_000;
  const day = 24 * 60 * minute;
  it.each([
    [now - 10_000, "just now"],
    [now + 10_000, "in under a minute"],
    [now - 2 * minute, "2 minutes ago"],
    [now - 90 * minute, "2 hours ago"],
    [now - day, "yesterday"],
    [now + 30 * day - 5 * minute, "in 30 days"],
    [now - 400 * day, "last year"],
  ])("%d → %s", (at, expected) => {
    expect(relativeTime(at, now)).toBe(expected);
  });

  it("says — without a time", () => {
    expect(relativeTime(null, now)).toBe("—");
    expect(relativeTime(0, now)).toBe("—");
  });
});
