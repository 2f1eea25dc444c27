/**
 * How the platform files Better Auth's rate-limit keys. Better Auth keys a count by `<ip><path>`;
 * the platform counts a client by its rate-limit key (an IPv6 client by its /64) and keeps the
 * endpoints with a rule of their own apart from every other path.
 */
import type { BetterAuthOptions } from "better-auth";
import { rateLimitKey } from "service-auth/server";

/** A rate-limit store as Better Auth calls it (`rateLimit.customStorage`). */
export type RateLimitStorage = NonNullable<NonNullable<BetterAuthOptions["rateLimit"]>["customStorage"]>;

/** One client's count on one endpoint, as Better Auth stores it. */
export interface RateLimitEntry {
  key: string;
  count: number;
  lastRequest: number;
}

/** Better Auth's key split into the client's rate-limit key and the endpoint path. */
export function clientAndPath(key: string): { client: string; path: string } {
  // The address never contains "/"; the path starts with it (or is empty at the base path).
  const slash = key.indexOf("/");
  const ip = slash < 0 ? key : key.slice(0, slash);
  return { client: rateLimitKey(ip), path: slash < 0 ? "" : key.slice(slash) };
}

/**
 * The rule pattern among `patterns` that `path` falls under (`/sign-in/*` for `/sign-in/email`),
 * or undefined. A pattern ending in `/*` covers every path below it.
 */
export function ruleOf(path: string, patterns: readonly string[]): string | undefined {
  return patterns.find((p) => (p.endsWith("/*") ? path.startsWith(p.slice(0, -1)) : p === path));
}
