/**
 * Better Auth's rate limiter as the platform configures it: on in every mode, keyed by the real
 * client address (which the platform hands over in a private header, see `http.ts`), IPv6 clients
 * by their /64, with limits on the endpoints that guess or spend secrets.
 *
 * Storage: the endpoints with a rule below are counted in the database (Better Auth's `rateLimit`
 * model), shared by every instance; every other path under the general limit in a bounded memory
 * store of this process. `AUTH_RATE_LIMIT_STORAGE=memory` keeps all counts in memory.
 */
import type { BetterAuthOptions } from "better-auth";
import { adapterOf, databaseRateLimitStore } from "./database-store.ts";
import { memoryRateLimitStore } from "./memory-store.ts";

/** The request header carrying the client address to Better Auth; any client-sent copy is dropped. */
export const CLIENT_IP_HEADER = "x-service-auth-client-ip";

type Rule = { window: number; max: number };

const PER_MINUTE = (max: number): Rule => ({ window: 60, max });

/**
 * Limits per client address (IPv6: per /64) and endpoint, in requests per `window` seconds.
 * Better Auth's general limit (100 per 10 s) covers every other endpoint.
 */
export const AUTH_RATE_LIMITS: Readonly<Record<string, Rule>> = Object.freeze({
  // Password guessing and account creation.
  "/sign-in/*": PER_MINUTE(10),
  "/sign-up/*": PER_MINUTE(20),
  "/change-password": PER_MINUTE(10),
  "/change-email": PER_MINUTE(10),
  // Password reset: mails sent, tokens guessed.
  "/request-password-reset": PER_MINUTE(5),
  "/forget-password": PER_MINUTE(5),
  "/forget-password/*": PER_MINUTE(5),
  "/reset-password": PER_MINUTE(10),
  "/reset-password/*": PER_MINUTE(10),
  // One-time codes (two-factor, email and phone OTP).
  "/two-factor/*": PER_MINUTE(10),
  "/email-otp/*": PER_MINUTE(10),
  "/phone-number/*": PER_MINUTE(10),
  // The backend token endpoint: clients call it about every 15 minutes and on page loads.
  "/backend/token": PER_MINUTE(120),
});

/** Better Auth's general window (seconds) when the app sets none. */
const DEFAULT_WINDOW_SECONDS = 10;

/**
 * The longest window (ms) of the rules and the general limit: a count older than that counts
 * nothing. Rules given as functions (computed per request) count as one day.
 */
function longestWindowMs(rules: Readonly<Record<string, unknown>>, general = DEFAULT_WINDOW_SECONDS): number {
  const DAY = 86_400;
  const windows = Object.values(rules).map((rule) =>
    typeof rule === "function" ? DAY : rule ? ((rule as Partial<Rule>).window ?? 0) : 0,
  );
  return Math.max(general, ...windows) * 1000;
}

/**
 * The process setting that turns the limiter off (`AUTH_RATE_LIMIT=off`): for load tests and
 * benchmarks, whose whole load comes from one address.
 */
export const RATE_LIMIT_SWITCH_VAR = "AUTH_RATE_LIMIT";

/** The process setting choosing where counts live: `database` (default) or `memory`. */
export const RATE_LIMIT_STORAGE_VAR = "AUTH_RATE_LIMIT_STORAGE";

/** This process's store: auth instances are made per request, the counts must outlive them. */
const processStore = memoryRateLimitStore(Object.keys(AUTH_RATE_LIMITS));

/**
 * The rate-limit options: on (unless `AUTH_RATE_LIMIT=off`), the rules above, counts of limited
 * endpoints in the database when `database` is an adapter factory (unless
 * `AUTH_RATE_LIMIT_STORAGE=memory`) and the bounded memory store for the rest; an app's own `rateLimit` fields win, and its
 * `customRules` are added to (and override) the platform's. `database` holds the counts;
 * `options` gives the final options its adapter is made with (read at the first count).
 */
export function rateLimitOptions(
  own: BetterAuthOptions["rateLimit"],
  database?: BetterAuthOptions["database"],
  options: () => BetterAuthOptions = () => ({ database }),
): BetterAuthOptions["rateLimit"] {
  const customRules = { ...AUTH_RATE_LIMITS, ...own?.customRules };
  const adapter = process.env[RATE_LIMIT_STORAGE_VAR] === "memory" ? undefined : adapterOf(database, options);
  const ownStorage = own?.storage !== undefined || own?.customStorage !== undefined;
  const storage: Pick<NonNullable<BetterAuthOptions["rateLimit"]>, "storage" | "customStorage"> = ownStorage
    ? {}
    : adapter
      ? {
          // Also what makes Better Auth's schema (and so the adapter) know the `rateLimit` model.
          storage: "database",
          customStorage: databaseRateLimitStore(adapter, Object.keys(customRules), processStore, {
            retainMs: longestWindowMs(customRules, own?.window),
          }),
        }
      : { customStorage: processStore };
  return {
    enabled: process.env[RATE_LIMIT_SWITCH_VAR] !== "off",
    ...storage,
    ...own,
    customRules,
  };
}
