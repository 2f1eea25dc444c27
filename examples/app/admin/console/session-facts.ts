/**
 * A session row's raw facts as words for the console: the browser and OS named from the user
 * agent, the client address with loopback called "this machine", and times relative to now.
 * The user-agent rules cover the browsers people use and the clients a developer meets (curl,
 * Node's fetch); anything else shows its first product name. A few lines of ours instead of a
 * user-agent library: the console only names things, it decides nothing from them.
 */

/** What a user agent says about the client, in words: `browser` and `os` are "" when unknown. */
export interface ClientName {
  browser: string;
  os: string;
}

/** Browser rules, most specific first: Edge and Opera also say "Chrome", Chrome also says "Safari". */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, "Edge"],
  [/\b(?:OPR|Opera)\/(\d+)/, "Opera"],
  [/\bSamsungBrowser\/(\d+)/, "Samsung Internet"],
  [/\b(?:Firefox|FxiOS)\/(\d+)/, "Firefox"],
  [/\bHeadlessChrome\/(\d+)/, "Headless Chrome"],
  [/\b(?:Chrome|CriOS)\/(\d+)/, "Chrome"],
  [/\bChromium\/(\d+)/, "Chromium"],
  [/\bVersion\/(\d+)(?:\.\d+)*(?: Mobile\/\S+)? Safari\//, "Safari"],
  [/^curl\/(\d+(?:\.\d+)?)/, "curl"],
];

/** OS rules, most specific first: Android says "Linux", iOS says "like Mac OS X". */
const SYSTEMS: [RegExp, (match: RegExpMatchArray) => string][] = [
  [/\bWindows NT\b/, () => "Windows"],
  [/\biPad\b/, () => "iPadOS"],
  [/\b(?:iPhone|iPod)\b.*?\bOS (\d+)/, (m) => `iOS ${m[1]}`],
  [/\bAndroid (\d+)/, (m) => `Android ${m[1]}`],
  [/\bAndroid\b/, () => "Android"],
  [/\bCrOS\b/, () => "ChromeOS"],
  [/\bMac OS X\b|\bMacintosh\b/, () => "macOS"],
  [/\bLinux\b/, () => "Linux"],
];

/** The longest user agent read; the rest says nothing the rules look for. */
const MAX_USER_AGENT = 512;

/** Names the browser and OS of `userAgent` ("Chrome 120" on "macOS"). */
export function clientName(userAgent: string | null | undefined): ClientName {
  const ua = (userAgent ?? "").slice(0, MAX_USER_AGENT).trim();
  if (!ua) return { browser: "", os: "" };
  let browser = "";
  for (const [pattern, name] of BROWSERS) {
    const match = ua.match(pattern);
    if (match) {
      browser = `${name} ${match[1]}`;
      break;
    }
  }
  // Node's fetch (undici) sends just "node"; other clients lead with their product name, which
  // for an unrecognised browser is the meaningless "Mozilla".
  if (!browser && /^node\b/i.test(ua)) browser = "Node.js";
  else if (!browser && !/^Mozilla\//.test(ua)) browser = (ua.match(/^[\w.-]+/)?.[0] ?? "").slice(0, 40);
  let os = "";
  for (const [pattern, name] of SYSTEMS) {
    const match = ua.match(pattern);
    if (match) {
      os = name(match);
      break;
    }
  }
  return { browser, os };
}

/** "Chrome 120 on macOS", "Node.js", or "Unknown browser". */
export function clientText(userAgent: string | null | undefined): string {
  const { browser, os } = clientName(userAgent);
  if (!browser) return os ? `Unknown browser on ${os}` : "Unknown browser";
  return os ? `${browser} on ${os}` : browser;
}

/** True for an address of this machine: `::1`, 127.0.0.0/8 (also IPv4-mapped as `::ffff:127.…`). */
export function isLoopback(address: string): boolean {
  return address === "::1" || /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address);
}

/** The client address for a person: "this machine (::1)", "203.0.113.7", or "unknown address". */
export function addressText(address: string | null | undefined): string {
  if (!address) return "unknown address";
  return isLoopback(address) ? `this machine (${address})` : address;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600_000],
  ["month", 30 * 24 * 3600_000],
  ["day", 24 * 3600_000],
  ["hour", 3600_000],
  ["minute", 60_000],
];
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto", style: "long" });

/** `at` relative to `now`: "just now", "2 minutes ago", "yesterday", "in 30 days", "—" without a time. */
export function relativeTime(at: number | null | undefined, now: number): string {
  if (!at) return "—";
  const delta = at - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(delta) >= ms)
      return relative.format(Math.sign(delta) * Math.round(Math.abs(delta) / ms), unit);
  }
  return delta < 0 ? "just now" : "in under a minute";
}
