/**
 * The database rate-limit store in one process, over Better Auth's memory adapter with the unique
 * key the platform's adapters enforce (`CONFLICT`): other instances are simulated by writes made
 * between this store's read and its write. The same store against real instances on one SQLite
 * file is in rate-limit-shared.test.ts.
 */
import type { BetterAuthOptions } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { AppError } from "service-auth/server";
import { describe, expect, it } from "vitest";
import {
  adapterOf,
  databaseRateLimitStore,
  type PruneOptions,
} from "../../src/auth/rate-limit/database-store.ts";
import { memoryRateLimitStore } from "../../src/auth/rate-limit/memory-store.ts";
import { AUTH_RATE_LIMITS } from "../../src/auth/rate-limit/rules.ts";
import { setupLogCapture } from "../helpers/log-capture.ts";

const capture = setupLogCapture();
const PATTERNS = Object.keys(AUTH_RATE_LIMITS);
type Row = { id?: string; key: string; count: number | bigint; lastRequest: number };
type Adapter = NonNullable<ReturnType<typeof adapterOf>> extends () => Promise<infer A> ? A : never;

/** The counts' table of a database shared by "instances"; `create` refuses a taken key. */
function countsDatabase(rows: Row[] = []) {
  const db: Record<string, Row[]> = { rateLimit: rows };
  const database = memoryAdapter(db as Record<string, any[]>);
  const made = adapterOf(database, () => ({ database, rateLimit: { storage: "database" } }));
  if (!made) throw new Error("a memory adapter is an adapter factory");
  const adapter = async (): Promise<Adapter> => {
    const inner = await made();
    return {
      ...inner,
      create: async (args) => {
        if (db.rateLimit.some((r) => r.key === args.data.key)) throw new AppError("CONFLICT", "taken");
        return inner.create(args);
      },
    };
  };
  return { db, adapter };
}

/** A store over `adapter` with its own local store; `changes` runs after each of its reads. */
function storeOver(
  adapter: () => Promise<Adapter>,
  changes: { afterRead?: () => Promise<void>; create?: Adapter["create"] } = {},
  prune: PruneOptions = { retainMs: 60_000, now: () => 0 },
) {
  const local = memoryRateLimitStore(PATTERNS);
  let reads = 0;
  const wrapped = async (): Promise<Adapter> => {
    const inner = await adapter();
    return {
      ...inner,
      findOne: async (args) => {
        const row = await inner.findOne(args);
        reads++;
        await changes.afterRead?.();
        return row;
      },
      create: changes.create ?? inner.create,
    };
  };
  return { store: databaseRateLimitStore(wrapped, PATTERNS, local, prune), local, reads: () => reads };
}

const KEY = "198.51.100.1/sign-in/email";
const ROW_KEY = "198.51.100.1|/sign-in/*";
const rule = { window: 60, max: 3 };

describe("adapterOf", () => {
  it("has no adapter for options that are not an adapter factory, and makes one adapter only once", async () => {
    expect(adapterOf(undefined, () => ({}))).toBeUndefined();
    let made = 0;
    const database = memoryAdapter({});
    const adapter = adapterOf(
      (options: BetterAuthOptions) => {
        made++;
        return database(options);
      },
      () => ({ rateLimit: { storage: "database" } }),
    );
    expect(await adapter?.()).toBe(await adapter?.());
    expect(made).toBe(1);
  });
});

describe("the database store, one process", () => {
  it("reads counts stored as big integers as numbers", async () => {
    const { adapter } = countsDatabase([{ key: ROW_KEY, count: 4n, lastRequest: 1_000 }]);
    expect(await storeOver(adapter).store.get(KEY)).toMatchObject({ key: KEY, count: 4, lastRequest: 1_000 });
  });

  it("keeps paths without a rule in the local store, for get/set and consume", async () => {
    const { db, adapter } = countsDatabase();
    const { store, local } = storeOver(adapter);
    await store.set("198.51.100.1/get-session", { key: "k", count: 7, lastRequest: 1 });
    expect(await store.consume("198.51.100.1|/ok", rule)).toEqual({ allowed: true, retryAfter: null });
    expect(db.rateLimit).toEqual([]);
    expect(await local.get("198.51.100.1/get-session")).toMatchObject({ count: 7 });
    expect(await local.get("198.51.100.1/ok")).toMatchObject({ count: 1 });
  });

  it("counts a write on top of a row another instance deleted between the read and the write", async () => {
    const { db, adapter } = countsDatabase([{ key: ROW_KEY, count: 2, lastRequest: 1_000 }]);
    const { store } = storeOver(adapter);
    const seen = await store.get(KEY);
    if (!seen) throw new Error("the row was read");
    db.rateLimit.length = 0; // pruned by another instance
    await store.set(KEY, { ...seen, count: 3, lastRequest: 2_000 });
    expect(db.rateLimit).toMatchObject([{ key: ROW_KEY, count: 1, lastRequest: 2_000 }]);
  });

  it("gives a write up, logged, when other instances write between every read and write", async () => {
    const { db, adapter } = countsDatabase([{ key: ROW_KEY, count: 1, lastRequest: 1_000 }]);
    const bump = async () => {
      db.rateLimit[0].count = Number(db.rateLimit[0].count) + 1;
    };
    const seen = await storeOver(adapter).store.get(KEY);
    if (!seen) throw new Error("the row was read");
    const { store, reads } = storeOver(adapter, { afterRead: bump });
    const logs = capture();
    await bump(); // the write this store's set loses to
    await store.set(KEY, { ...seen, count: 2, lastRequest: 2_000 });
    expect(reads()).toBe(5);
    // Only the other instances' writes are in the row (one before the set, one per retry).
    expect(db.rateLimit[0]).toMatchObject({ count: 7, lastRequest: 1_000 });
    expect(logs.join("")).toMatch(/too much contention on one key.*"attempts":5/);
  });

  it("consume refuses, logged, when other instances write between every read and write", async () => {
    const { db, adapter } = countsDatabase([{ key: ROW_KEY, count: 1, lastRequest: Date.now() }]);
    const bump = async () => {
      db.rateLimit[0].lastRequest += 1;
    };
    const { store, reads } = storeOver(adapter, { afterRead: bump });
    const logs = capture();
    expect(await store.consume("198.51.100.1|/sign-in/email", { window: 60, max: 100 })).toEqual({
      allowed: false,
      retryAfter: 1,
    });
    expect(reads()).toBe(5);
    expect(db.rateLimit[0]).toMatchObject({ count: 1 });
    expect(logs.join("")).toMatch(/too much contention on one key.*"attempts":5/);
  });

  it("consume decides again on what another instance wrote, and writes nothing when it refuses", async () => {
    const { db, adapter } = countsDatabase([{ key: ROW_KEY, count: 2, lastRequest: Date.now() }]);
    let once = true;
    const other = async () => {
      if (!once) return;
      once = false;
      db.rateLimit[0].count = 3;
    };
    const { store } = storeOver(adapter, { afterRead: other });
    const verdict = await store.consume("198.51.100.1|/sign-in/email", rule);
    expect(verdict.allowed).toBe(false);
    expect(db.rateLimit[0]).toMatchObject({ count: 3 });
  });

  it("a failing create is the database's error, not a lost race", async () => {
    const { adapter } = countsDatabase();
    const down = async (): Promise<never> => {
      throw new AppError("UNAVAILABLE", "database down");
    };
    const { store, reads } = storeOver(adapter, { create: down });
    await expect(store.set(KEY, { key: KEY, count: 1, lastRequest: 1_000 })).rejects.toMatchObject({
      code: "UNAVAILABLE",
    });
    expect(reads()).toBe(0);
  });
});

describe("pruning, one process", () => {
  it("prunes again exactly one window after the last prune, logging the rows it deleted", async () => {
    process.env.LOG_LEVEL = "info";
    let now = 0;
    const { db, adapter } = countsDatabase([
      { key: "192.0.2.0|/sign-in/*", count: 1, lastRequest: -60_001 },
      { key: "192.0.2.1|/sign-in/*", count: 1, lastRequest: -1 },
    ]);
    const { store } = storeOver(adapter, {}, { retainMs: 60_000, now: () => now });
    const logs = capture();
    await store.set("192.0.2.2/sign-in/email", { key: "k", count: 1, lastRequest: 0 });
    // The first new row prunes: only rows older than a window go.
    expect(db.rateLimit.map((r) => r.key)).toEqual(["192.0.2.1|/sign-in/*", "192.0.2.2|/sign-in/*"]);
    now = 59_999;
    await store.set("192.0.2.4/sign-in/email", { key: "k", count: 1, lastRequest: -1 });
    await store.set("192.0.2.4/sign-in/email", { key: "k", count: 1, lastRequest: -1 });
    now = 60_000;
    await store.set("192.0.2.3/sign-in/email", { key: "k", count: 1, lastRequest: now });
    expect(db.rateLimit.map((r) => r.key)).toEqual(["192.0.2.2|/sign-in/*", "192.0.2.3|/sign-in/*"]);
    // A prune that finds nothing to delete says nothing.
    const empty = storeOver(countsDatabase().adapter, {}, { retainMs: 60_000, now: () => now });
    await empty.store.set("192.0.2.5/sign-in/email", { key: "k", count: 1, lastRequest: now });
    const pruned = logs.filter((line) => line.includes("rate limit counts pruned"));
    expect(pruned.map((line) => JSON.parse(line).rows)).toEqual([1, 2]);
  });
});

describe("a database without the rateLimit table", () => {
  const missing = (error: Error) => {
    const { adapter } = countsDatabase();
    return async (): Promise<Adapter> => ({
      ...(await adapter()),
      findOne: async () => {
        throw error;
      },
    });
  };

  it("counts in the local store, logging it once; any other refusal is the caller's error", async () => {
    const logs = capture();
    const refusals = [
      new AppError("BAD_REQUEST", "no such model", { data: { model: "rateLimit" } }),
      new AppError("INVALID_ARGUMENTS", "no such model", { data: { path: "args.model" } }),
    ];
    for (const refusal of refusals) {
      const { store, local } = storeOver(missing(refusal));
      expect(await store.get(KEY)).toBeUndefined();
      expect(await store.consume("198.51.100.1|/sign-in/email", rule)).toEqual({
        allowed: true,
        retryAfter: null,
      });
      expect(await store.get(KEY)).toMatchObject({ count: 1 });
      expect(await local.get(KEY)).toMatchObject({ count: 1 });
    }
    expect(logs.filter((line) => line.includes("the schema has no rateLimit table"))).toHaveLength(1);
    const others = [
      new AppError("BAD_REQUEST", "bad", { data: { model: "user" } }),
      new AppError("BAD_REQUEST", "bad"),
      new AppError("INVALID_ARGUMENTS", "bad", { data: { path: "args.where" } }),
      new AppError("INVALID_ARGUMENTS", "bad"),
      new AppError("UNAVAILABLE", "down", { data: { model: "rateLimit", path: "args.model" } }),
      new Error("plain"),
      // Not the platform's refusal, though it carries the same fields.
      Object.assign(new Error("driver"), { code: "INVALID_ARGUMENTS", data: { path: "args.model" } }),
    ];
    for (const other of others) {
      const { store } = storeOver(missing(other));
      await expect(store.get(KEY)).rejects.toBe(other);
    }
  });
});
