/**
 * Better Auth's rate limiter as the platform configures it: on in every mode, keyed by the real
 * client address (which the platform hands over in a private header, see `http.ts`), IPv6 clients
 * by their /64, with limits on the endpoints that guess or spend secrets.
 *
 * Storage: a bounded in-memory store of this process. Shared counts (`storage: "database"`) need
 * Better Auth's `rateLimit` table in the app schema, which is not wired yet (README "Limits").
 */
import type { BetterAuthOptions } from "better-auth";
import { rateLimitKey } from "service-auth/server";

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

/** One client's count on one endpoint, as Better Auth stores it. */
interface RateLimitEntry {
  key: string;
  count: number;
  lastRequest: number;
}

/** Entries kept per store half; the least recently used go first. */
const MAX_ENTRIES = 50_000;

/**
 * A least-recently-used map of a fixed size: memory stays bounded whatever keys clients make up
 * (Better Auth's own memory store keeps every key forever).
 */
class BoundedMap {
  private readonly entries = new Map<string, RateLimitEntry>();
  constructor(private readonly max: number) {}

  get(key: string): RateLimitEntry | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: RateLimitEntry): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** Paths with a rule of {@link AUTH_RATE_LIMITS}, as Better Auth matches them. */
function limitedPath(path: string): boolean {
  return Object.keys(AUTH_RATE_LIMITS).some((p) =>
    p.endsWith("/*") ? path.startsWith(p.slice(0, -1)) : p === path,
  );
}

/**
 * The store: Better Auth's key (`<ip><path>`) with the address replaced by its rate-limit key
 * (an IPv6 /64). Entries of limited endpoints live apart from the rest, so flooding made-up paths
 * cannot push a client's sign-in count out of memory.
 */
export function rateLimitStore(): NonNullable<NonNullable<BetterAuthOptions["rateLimit"]>["customStorage"]> {
  const limited = new BoundedMap(MAX_ENTRIES);
  const other = new BoundedMap(MAX_ENTRIES);
  const place = (key: string): { map: BoundedMap; key: string } => {
    // The address never contains "/"; the path starts with it (or is empty at the base path).
    const slash = key.indexOf("/");
    const ip = slash < 0 ? key : key.slice(0, slash);
    const path = slash < 0 ? "" : key.slice(slash);
    return { map: limitedPath(path) ? limited : other, key: `${rateLimitKey(ip)}|${path}` };
  };
  return {
    async get(key) {
      const at = place(key);
      return at.map.get(at.key);
    },
    async set(key, value) {
      const at = place(key);
      at.map.set(at.key, value);
    },
  };
}

/**
 * The process setting that turns the limiter off (`AUTH_RATE_LIMIT=off`): for load tests and
 * benchmarks, whose whole load comes from one address.
 */
export const RATE_LIMIT_SWITCH_VAR = "AUTH_RATE_LIMIT";

/** This process's store: auth instances are made per request, the counts must outlive them. */
const processStore = rateLimitStore();

/**
 * The rate-limit options: on (unless `AUTH_RATE_LIMIT=off`), the rules above, the bounded store;
 * an app's own `rateLimit` fields win, and its `customRules` are added to (and override) the
 * platform's.
 */
export function rateLimitOptions(own: BetterAuthOptions["rateLimit"]): BetterAuthOptions["rateLimit"] {
  return {
    enabled: process.env[RATE_LIMIT_SWITCH_VAR] !== "off",
    customStorage: own?.storage ? undefined : processStore,
    ...own,
    customRules: { ...AUTH_RATE_LIMITS, ...own?.customRules },
  };
}
