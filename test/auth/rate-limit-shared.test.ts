/**
 * Rate-limit counts shared through the database: two instances of the example app on one SQLite
 * file count a client's wrong sign-ins together, and instances racing on one key lose no count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authData } from "../../examples/app/auth.ts";
import { createApi } from "../../src/auth/data/functions.ts";
import { type AuthFunctions, bindAuthData, defineAuthTables } from "../../src/auth/index.ts";
import {
  adapterOf,
  databaseRateLimitStore,
  type PruneOptions,
} from "../../src/auth/rate-limit/database-store.ts";
import { memoryRateLimitStore } from "../../src/auth/rate-limit/memory-store.ts";
import { AUTH_RATE_LIMITS } from "../../src/auth/rate-limit/rules.ts";
import { anyApi, defineSchema } from "../../src/backend/server.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { startTestBackend } from "../helpers/service.ts";

const SIGN_IN_MAX = AUTH_RATE_LIMITS["/sign-in/*"].max;

let apps: ExampleApp[] = [];
beforeAll(async () => {
  const first = await startExampleApp();
  const second = await startExampleApp({ databaseUrl: first.service.databaseFile });
  apps = [first, second];
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

function signIn(app: ExampleApp, email: string, password: string, forwardedFor: string): Promise<Response> {
  return fetch(`${app.url}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { origin: app.url, "content-type": "application/json", "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ email, password }),
  });
}

/** The stored count of `client` on the sign-in rule, read through instance `i`. */
async function storedCount(i: number, client: string): Promise<number | undefined> {
  const rows = await apps[i].backend.read(async (db) => db.query("rateLimit").collect());
  return rows.find((r: any) => r.key === `${client}|/sign-in/*`)?.count;
}

/** A store over `backend`'s data functions, as its HTTP routes reach them. */
function storeOver(
  backend: Pick<ExampleApp["backend"], "runQuery" | "runMutation">,
  client: Pick<typeof authData, "httpAdapter">,
  // The other tests write small timestamps: with the clock at 0 nothing is old enough to prune.
  prune: PruneOptions = { retainMs: 60_000, now: () => 0 },
) {
  const ctx = {
    runQuery: async (ref: any, args: any) =>
      (await backend.runQuery(ref, args, { allowInternal: true })).value,
    runMutation: async (ref: any, args: any) =>
      (await backend.runMutation(ref, args, { allowInternal: true })).value,
  } as Parameters<typeof authData.httpAdapter>[0];
  const database = client.httpAdapter(ctx);
  const adapter = adapterOf(database, () => ({ database, rateLimit: { storage: "database" } }));
  if (!adapter) throw new Error("the example's database is an adapter factory");
  const patterns = Object.keys(AUTH_RATE_LIMITS);
  return databaseRateLimitStore(adapter, patterns, memoryRateLimitStore(patterns), prune);
}

describe("rate limits shared by instances", () => {
  beforeAll(async () => {
    await apps[0].signUp("shared@example.com");
    // Each test's client is an address behind the trusted local proxy.
    for (const app of apps) await app.backend.env.set("TRUSTED_PROXIES", "127.0.0.1");
  });

  it(`limit a client whose ${SIGN_IN_MAX} wrong sign-ins are split across both instances`, async () => {
    const client = "203.0.113.10";
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_MAX; i++) {
      statuses.push((await signIn(apps[i % 2], "shared@example.com", `wrong-${i}`, client)).status);
    }
    expect(statuses).toEqual(Array(SIGN_IN_MAX).fill(401));
    for (const app of apps) {
      const res = await signIn(app, "shared@example.com", "wrong-again", client);
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ code: "TOO_MANY_REQUESTS" });
    }
    // The count lives in the database, where either instance reads it.
    expect(await storedCount(1, client)).toBe(SIGN_IN_MAX);
    // Another client is not limited.
    expect((await signIn(apps[1], "shared@example.com", "wrong", "203.0.113.11")).status).toBe(401);
  });

  it("counts every one of concurrent sign-ins sent to both instances", async () => {
    const client = "203.0.113.20";
    const perInstance = 4;
    const statuses = await Promise.all(
      Array.from({ length: 2 * perInstance }, (_, i) =>
        signIn(apps[i % 2], "shared@example.com", `wrong-${i}`, client).then((r) => r.status),
      ),
    );
    expect(statuses).toEqual(Array(2 * perInstance).fill(401));
    expect(await storedCount(0, client)).toBe(2 * perInstance);
  });

  it("counts an IPv6 client by its /64 in the shared store", async () => {
    await signIn(apps[0], "shared@example.com", "wrong", "2001:db8:5:6::1");
    await signIn(apps[1], "shared@example.com", "wrong", "2001:db8:5:6::2");
    expect(await storedCount(0, "2001:db8:5:6::/64")).toBe(2);
  });

  it("counts other endpoints apart from sign-in, outside the database", async () => {
    const before = await apps[0].backend.read(async (db) => (await db.query("rateLimit").collect()).length);
    expect((await apps[0].browser().get("/api/auth/get-session")).status).toBe(200);
    const after = await apps[0].backend.read(async (db) => (await db.query("rateLimit").collect()).length);
    expect(after).toBe(before);
  });
});

describe("the database store", () => {
  /** Instance `i`'s store. */
  const storeOf = (i: number) => storeOver(apps[i].backend, authData);

  it("loses no count when two instances read the same count and then both write", async () => {
    const [a, b] = [storeOf(0), storeOf(1)];
    const key = "198.51.100.7/sign-in/email";
    // Both create the client's first count: the unique key makes the second one an increment.
    expect(await a.get(key)).toBeUndefined();
    expect(await b.get(key)).toBeUndefined();
    await a.set(key, { key, count: 1, lastRequest: 1_000 });
    await b.set(key, { key, count: 1, lastRequest: 1_001 });
    expect(await a.get(key)).toMatchObject({ count: 2, lastRequest: 1_001 });
    // Better Auth's read-then-write, interleaved: each writes what it read plus one.
    const [readA, readB] = [await a.get(key), await b.get(key)];
    if (!readA || !readB) throw new Error("the count was written");
    await a.set(key, { ...readA, count: readA.count + 1, lastRequest: 2_000 });
    await b.set(key, { ...readB, count: readB.count + 1, lastRequest: 2_001 });
    expect(await b.get(key)).toMatchObject({ count: 4, lastRequest: 2_001 });
    // A reset (window over) racing an increment: the later write counts on top of the reset.
    const [resetA, resetB] = [await a.get(key), await b.get(key)];
    if (!resetA || !resetB) throw new Error("the count was written");
    await a.set(key, { ...resetA, count: 1, lastRequest: 90_000 });
    await b.set(key, { ...resetB, count: 1, lastRequest: 90_001 });
    expect(await a.get(key)).toMatchObject({ count: 2, lastRequest: 90_001 });
  });

  it("consume (Better Auth 1.7) admits exactly the limit, each admission counted, when requests race on one key", async () => {
    const [a, b] = [storeOf(0), storeOf(1)];
    const rule = { window: 60, max: 5 };
    const key = (i: number) => `198.51.100.10|/sign-in/attempt-${i}`;
    const verdicts = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).consume(key(i), rule)),
    );
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(rule.max);
    for (const refused of verdicts.filter((v) => !v.allowed)) expect(refused.retryAfter).toBeGreaterThan(0);
    const rows = await apps[0].backend.read(async (db) => db.query("rateLimit").collect());
    expect(rows.filter((r: any) => r.key === "198.51.100.10|/sign-in/*")).toMatchObject([
      { count: rule.max },
    ]);
  });

  it("keeps one row per client and rule, whatever path below the rule is asked for", async () => {
    const store = storeOf(0);
    for (const path of ["/sign-in/email", "/sign-in/made-up-1", "/sign-in/made-up-2"]) {
      const key = `198.51.100.8${path}`;
      const seen = await store.get(key);
      await store.set(key, { key, count: (seen?.count ?? 0) + 1, lastRequest: 5_000 });
    }
    const rows = await apps[0].backend.read(async (db) => db.query("rateLimit").collect());
    expect(rows.filter((r: any) => r.key.startsWith("198.51.100.8|"))).toMatchObject([
      { key: "198.51.100.8|/sign-in/*", count: 3 },
    ]);
  });
});

describe("pruning the counts", () => {
  const rows = async () =>
    (await apps[0].backend.read(async (db) => db.query("rateLimit").collect())).filter((r: any) =>
      r.key.startsWith("192.0.2."),
    ) as { key: string; lastRequest: number }[];

  it("deletes rows past the longest window before creating a row, at most once per window", async () => {
    let now = 10_000_000;
    const store = storeOver(apps[0].backend, authData, { retainMs: 60_000, now: () => now });
    const count = async (client: string, at: number) => {
      const key = `${client}/sign-in/email`;
      const seen = await store.get(key);
      await store.set(key, { key, count: (seen?.count ?? 0) + 1, lastRequest: at });
    };
    await count("192.0.2.1", now - 120_000); // a client last seen two windows ago
    await count("192.0.2.2", now - 30_000); // one seen within the window
    expect((await rows()).map((r) => r.key).sort()).toEqual(["192.0.2.1|/sign-in/*", "192.0.2.2|/sign-in/*"]);
    // Within the window since the last prune, a new row prunes nothing.
    now += 59_000;
    await count("192.0.2.3", now);
    expect((await rows()).length).toBe(3);
    // A window later, the next new row deletes every row older than a window; the rest stay.
    now += 2_000;
    await count("192.0.2.4", now);
    expect((await rows()).map((r) => r.key).sort()).toEqual(["192.0.2.3|/sign-in/*", "192.0.2.4|/sign-in/*"]);
    // An update of a live row prunes nothing and counts on.
    await count("192.0.2.4", now);
    expect((await rows()).find((r) => r.key === "192.0.2.4|/sign-in/*")).toMatchObject({ count: 2 });
  });
});

describe("an app whose schema has no rateLimit table", () => {
  it("counts in memory instead, and answers", async () => {
    const schema = defineSchema({ ...defineAuthTables() });
    const backend = await startTestBackend({ schema, modules: { auth: createApi(schema) } });
    try {
      const store = storeOver(backend, bindAuthData({ authFunctions: anyApi.auth as AuthFunctions, schema }));
      const key = "198.51.100.9/sign-in/email";
      expect(await store.get(key)).toBeUndefined();
      await store.set(key, { key, count: 1, lastRequest: 7_000 });
      expect(await store.get(key)).toMatchObject({ count: 1, lastRequest: 7_000 });
    } finally {
      await backend.close();
    }
  });
});
