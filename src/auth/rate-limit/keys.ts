/**
 * How the platform files Better Auth's rate-limit keys. Better Auth keys a count by `<ip><path>`
 * (1.4) or `<ip>|<path>` (1.7); the platform counts a client by its rate-limit key (an IPv6 client
 * by its /64) and keeps the endpoints with a rule of their own apart from every other path.
 */
import { rateLimitKey } from "service-auth/server";

/** Better Auth's key split into the client's rate-limit key and the endpoint path. */
export function clientAndPath(key: string): { client: string; path: string } {
  // The address contains neither "/" nor "|"; the path starts with "/" (or is empty at the base
  // path), so a "|" before the first "/" is 1.7's separator.
  const slash = key.indexOf("/");
  const bar = key.indexOf("|");
  const separated = bar >= 0 && (slash < 0 || bar < slash);
  const end = separated ? bar : slash < 0 ? key.length : slash;
  const path = separated ? key.slice(bar + 1) : key.slice(end);
  return { client: rateLimitKey(key.slice(0, end)), path };
}

/**
 * The rule pattern among `patterns` that `path` falls under (`/sign-in/*` for `/sign-in/email`),
 * or undefined. A pattern ending in `/*` covers every path below it.
 */
export function ruleOf(path: string, patterns: readonly string[]): string | undefined {
  return patterns.find((p) => (p.endsWith("/*") ? path.startsWith(p.slice(0, -1)) : p === path));
}
