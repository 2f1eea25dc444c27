/**
 * `withAuthDefaults`' rate-limit, client-address and user-field options, and the bounded store:
 * an app's own settings win, its hooks still run, and made-up paths cannot flush sign-in counts.
 */
import type { BetterAuthOptions } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { afterEach, describe, expect, it } from "vitest";
import { memoryRateLimitStore } from "../../src/auth/rate-limit/memory-store.ts";
import { AUTH_RATE_LIMITS, CLIENT_IP_HEADER } from "../../src/auth/rate-limit/rules.ts";
import { withAuthDefaults as withDefaults } from "../../src/auth/with-auth-defaults.ts";

const rateLimitStore = () => memoryRateLimitStore(Object.keys(AUTH_RATE_LIMITS));

/** The defaults as Better Auth sees them (the wrapper keeps the app's own option type). */
const withAuthDefaults = (options: BetterAuthOptions): BetterAuthOptions => withDefaults(options);

afterEach(() => {
  delete process.env.AUTH_RATE_LIMIT;
  delete process.env.AUTH_RATE_LIMIT_STORAGE;
});

describe("withAuthDefaults", () => {
  it("turns the limiter on with the platform's rules and the client address header", () => {
    const options = withAuthDefaults({});
    expect(options.rateLimit).toMatchObject({ enabled: true, customRules: AUTH_RATE_LIMITS });
    expect(options.rateLimit?.customStorage).toBeDefined();
    expect(options.advanced?.ipAddress).toEqual({ ipAddressHeaders: [CLIENT_IP_HEADER] });
  });

  it("lets the app's own settings win", () => {
    const options = withAuthDefaults({
      rateLimit: { storage: "database", customRules: { "/sign-in/*": { window: 10, max: 2 } } },
      advanced: { ipAddress: { ipAddressHeaders: ["cf-connecting-ip"] }, cookiePrefix: "x" },
    });
    expect(options.rateLimit?.storage).toBe("database");
    // Better Auth prefers a custom store over `storage`: none is set then.
    expect(options.rateLimit?.customStorage).toBeUndefined();
    expect(options.rateLimit?.customRules?.["/sign-in/*"]).toEqual({ window: 10, max: 2 });
    expect(options.rateLimit?.customRules?.["/sign-up/*"]).toEqual(AUTH_RATE_LIMITS["/sign-up/*"]);
    expect(options.advanced).toEqual({
      ipAddress: { ipAddressHeaders: ["cf-connecting-ip"] },
      cookiePrefix: "x",
    });
    expect(withAuthDefaults({ rateLimit: { enabled: false } }).rateLimit?.enabled).toBe(false);
  });

  it("counts in the app's database when it is an adapter, in memory with AUTH_RATE_LIMIT_STORAGE=memory", () => {
    const database = memoryAdapter({});
    const shared = withAuthDefaults({ database }).rateLimit;
    expect(shared?.storage).toBe("database");
    const memory = withAuthDefaults({}).rateLimit?.customStorage;
    expect(shared?.customStorage).not.toBe(memory);
    process.env.AUTH_RATE_LIMIT_STORAGE = "memory";
    const local = withAuthDefaults({ database }).rateLimit;
    expect(local?.storage).toBeUndefined();
    expect(local?.customStorage).toBe(memory);
  });

  it("has the limits docs/app-guide.md documents (Limits), each per minute", () => {
    const perMinute = (max: number) => ({ window: 60, max });
    expect(AUTH_RATE_LIMITS).toEqual({
      "/sign-in/*": perMinute(10),
      "/sign-up/*": perMinute(20),
      "/change-password": perMinute(10),
      "/change-email": perMinute(10),
      "/request-password-reset": perMinute(5),
      "/forget-password": perMinute(5),
      "/forget-password/*": perMinute(5),
      "/reset-password": perMinute(10),
      "/reset-password/*": perMinute(10),
      "/two-factor/*": perMinute(10),
      "/email-otp/*": perMinute(10),
      "/phone-number/*": perMinute(10),
      "/backend/token": perMinute(120),
    });
  });

  it("leaves an app's own custom store alone, with no database storage beside it", () => {
    const mine = rateLimitStore();
    const options = withAuthDefaults({ database: memoryAdapter({}), rateLimit: { customStorage: mine } });
    expect(options.rateLimit?.customStorage).toBe(mine);
    expect(options.rateLimit?.storage).toBeUndefined();
  });

  it("is off with AUTH_RATE_LIMIT=off", () => {
    process.env.AUTH_RATE_LIMIT = "off";
    expect(withAuthDefaults({}).rateLimit?.enabled).toBe(false);
  });

  it("checks user field lengths before the app's own user hooks, which still run", async () => {
    const seen: string[] = [];
    const options = withAuthDefaults({
      databaseHooks: {
        user: {
          create: {
            before: async (user) => {
              seen.push(`create ${user.name}`);
            },
          },
        },
      },
    });
    const hooks = options.databaseHooks?.user;
    const user = {
      id: "1",
      name: "Ann",
      email: "a@example.com",
      emailVerified: false,
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    await hooks?.create?.before?.(user, null);
    expect(seen).toEqual(["create Ann"]);
    await expect(hooks?.create?.before?.({ ...user, name: "n".repeat(257) }, null)).rejects.toMatchObject({
      statusCode: 400,
      body: { code: "FIELD_TOO_LONG", field: "name" },
    });
    expect(seen).toEqual(["create Ann"]);
    await expect(hooks?.update?.before?.({ username: "u".repeat(65) }, null)).rejects.toMatchObject({
      body: { field: "username" },
    });
  });
});

describe("pruning the database counts", () => {
  const HOUR = 3_600_000;
  /** A database holding `ages` (ms before now) as sign-in counts; one new count prunes it. */
  async function pruneAfter(ages: number[], own?: BetterAuthOptions["rateLimit"]): Promise<number[]> {
    const now = Date.now();
    const db: Record<string, Record<string, unknown>[]> = {
      rateLimit: ages.map((age, i) => ({
        id: `r${i}`,
        key: `198.51.100.${i}|/sign-in/*`,
        count: 1,
        lastRequest: now - age,
      })),
    };
    const store = withAuthDefaults({ database: memoryAdapter(db), rateLimit: own }).rateLimit?.customStorage;
    await store?.set("203.0.113.9/sign-in/email", { key: "x", count: 1, lastRequest: now });
    return db.rateLimit
      .filter((row) => row.key !== "203.0.113.9|/sign-in/*")
      .map((row) => now - Number(row.lastRequest));
  }

  it("deletes counts older than the longest rule's window (a minute), keeps younger ones", async () => {
    expect(await pruneAfter([30_000, 2 * HOUR])).toEqual([30_000]);
  });

  it("counts a rule given as a function as a day long", async () => {
    const own = { customRules: { "/custom": () => ({ window: 1, max: 1 }) } };
    expect(await pruneAfter([2 * HOUR, 48 * HOUR], own)).toEqual([2 * HOUR]);
  });
});

describe("rateLimitStore", () => {
  const entry = (key: string, count: number) => ({ key, count, lastRequest: 1 });

  it("counts an IPv6 /64 as one client", async () => {
    const store = rateLimitStore();
    await store.set("2001:db8:1:2::1/sign-in/email", entry("a", 3));
    expect(await store.get("2001:db8:1:2::ffff/sign-in/email")).toMatchObject({ count: 3 });
    expect(await store.get("2001:db8:1:3::1/sign-in/email")).toBeUndefined();
    expect(await store.get("2001:db8:1:2::1/sign-up/email")).toBeUndefined();
  });

  it("keeps sign-in counts while made-up paths flood the rest", async () => {
    const store = rateLimitStore();
    await store.set("203.0.113.1/sign-in/email", entry("a", 9));
    for (let i = 0; i < 60_000; i++) await store.set(`203.0.113.2/made-up-${i}`, entry("b", 1));
    expect(await store.get("203.0.113.1/sign-in/email")).toMatchObject({ count: 9 });
    // The flood itself is bounded: its oldest entries are gone.
    expect(await store.get("203.0.113.2/made-up-0")).toBeUndefined();
    expect(await store.get("203.0.113.2/made-up-59999")).toMatchObject({ count: 1 });
  });

  it("keeps the last 50,000 entries of a half", async () => {
    const store = rateLimitStore();
    for (let i = 0; i < 50_000; i++) await store.set(`203.0.113.3/made-up-${i}`, entry("c", 1));
    expect(await store.get("203.0.113.3/made-up-0")).toMatchObject({ count: 1 });
    await store.set("203.0.113.3/made-up-50000", entry("c", 1));
    expect(await store.get("203.0.113.3/made-up-0")).toBeUndefined();
    expect(await store.get("203.0.113.3/made-up-1")).toMatchObject({ count: 1 });
  });

  // Better Auth 1.7 calls `consume` with keys `<ip>|<path>`; 1.4 calls get/set with `<ip><path>`.
  it("consume (1.7) counts and refuses as get/set (1.4) do, in the same entries", async () => {
    const store = rateLimitStore();
    const rule = { window: 60, max: 2 };
    expect(await store.consume("2001:db8:1:2::1|/sign-in/email", rule)).toEqual({
      allowed: true,
      retryAfter: null,
    });
    expect(await store.consume("2001:db8:1:2::2|/sign-in/email", rule)).toEqual({
      allowed: true,
      retryAfter: null,
    });
    const refused = await store.consume("2001:db8:1:2::3|/sign-in/email", rule);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfter).toBeGreaterThan(0);
    expect(refused.retryAfter).toBeLessThanOrEqual(60);
    // The same /64 and endpoint, whichever key format asks.
    expect(await store.get("2001:db8:1:2::9/sign-in/email")).toMatchObject({ count: 2 });
    expect(await store.consume("2001:db8:1:3::1|/sign-in/email", rule)).toMatchObject({ allowed: true });
  });

  it("consume starts a new count once a whole window has passed since the last request", async () => {
    const store = rateLimitStore();
    const long = Date.now() - 61_000;
    await store.set("203.0.113.5/sign-in/email", { key: "x", count: 9, lastRequest: long });
    expect(await store.consume("203.0.113.5|/sign-in/email", { window: 60, max: 2 })).toMatchObject({
      allowed: true,
    });
    expect(await store.get("203.0.113.5/sign-in/email")).toMatchObject({ count: 1 });
  });
});
