/**
 * Retries after a database outage consult the engine's outage breaker (`StorageEngine.reachability`):
 * a live query and a WebSocket identity check that met `DATABASE_UNAVAILABLE` while the breaker
 * knows the database down run again as soon as it says the database answers, not only when their
 * own timers (the query's backoff, the sweep) come round. The breaker is faked here so the test
 * decides when the outage ends; test/postgres/faults covers a real server's outage.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { IdentityResolver } from "../../src/backend/runtime.ts";
import { AppError } from "../../src/backend/server.ts";
import type { Reachability } from "../../src/backend/storage/engine.ts";
import { QueryGroup } from "../../src/backend/sync/query-group.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";
import { AUDIENCE, ISSUER, makeKeys, resolveIdentity, signToken, type TestKeys } from "./fixtures/auth.ts";
import { RawSocket } from "./fixtures/harness.ts";
import * as messages from "./fixtures/messages.ts";
import schema from "./fixtures/schema.ts";

/** A breaker the test controls: down until {@link answer} is called. */
function fakeBreaker() {
  const listeners = new Set<() => void>();
  const breaker = {
    isDown: true,
    onReachable(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    answer() {
      breaker.isDown = false;
      const all = [...listeners];
      listeners.clear();
      for (const listener of all) listener();
    },
    get waiting() {
      return listeners.size;
    },
  };
  return breaker satisfies Reachability;
}

/** A live query group over a backend whose every run fails with `code`, counting its reruns. */
function failingGroup(breaker: Reachability, code: "DATABASE_UNAVAILABLE" | "DATABASE_BUSY") {
  const counts = { runs: 0, reruns: 0 };
  const backend = {
    engine: { reachability: breaker },
    runQuery: async () => {
      counts.runs++;
      throw new AppError(code, "the database failed");
    },
  };
  const group = new QueryGroup(
    backend as never,
    "k",
    "messages:byChannel",
    {},
    { identity: null, token: null },
    () => counts.reruns++,
  );
  return { group, counts };
}

describe("a live query that met an outage", () => {
  afterEach(() => vi.useRealTimers());

  it("runs again when the breaker sees the database answer, and its backoff timer no longer fires", async () => {
    vi.useFakeTimers();
    const breaker = fakeBreaker();
    const { group, counts } = failingGroup(breaker, "DATABASE_UNAVAILABLE");
    await group.execute();
    expect(counts.runs).toBe(1);
    expect(breaker.waiting).toBe(1);
    expect(counts.reruns).toBe(0);
    breaker.answer();
    expect(counts.reruns).toBe(1);
    // The backoff's timer was cancelled with it: one rerun, not two.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(counts.reruns).toBe(1);
  });

  it("waits on its backoff alone while the breaker does not know the database down", async () => {
    vi.useFakeTimers();
    const breaker = fakeBreaker();
    breaker.isDown = false;
    const { group, counts } = failingGroup(breaker, "DATABASE_BUSY");
    await group.execute();
    expect(breaker.waiting).toBe(0);
    await vi.advanceTimersByTimeAsync(249);
    expect(counts.reruns).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(counts.reruns).toBe(1);
  });

  it("stops waiting for the breaker when the group is gone", async () => {
    const breaker = fakeBreaker();
    const { group, counts } = failingGroup(breaker, "DATABASE_UNAVAILABLE");
    await group.execute();
    group.cancelRetry();
    expect(breaker.waiting).toBe(0);
    breaker.answer();
    expect(counts.reruns).toBe(0);
  });
});

describe("a WebSocket identity check that met an outage", () => {
  let service: TestService;
  let keys: TestKeys;
  let outage: AppError | null = null;
  let checks = 0;

  beforeAll(async () => {
    keys = await makeKeys("k1");
    const faulty: IdentityResolver = async (claims, ctx) => {
      checks++;
      if (outage) throw outage;
      return resolveIdentity(claims, ctx);
    };
    service = await startTestService({
      schema,
      modules: { messages },
      auth: {
        providers: [{ issuer: ISSUER, audience: AUDIENCE, jwks: JSON.stringify({ keys: [keys.jwk] }) }],
        resolveIdentity: faulty,
      },
      // The sweep would retry the check after a second: an hour here, so only the breaker can.
      sync: { sweepIntervalMs: 3_600_000 },
    });
  });
  afterAll(() => service?.close());

  it("runs again as soon as the breaker sees the database answer", { timeout: 20_000 }, async () => {
    const breaker = fakeBreaker();
    Object.defineProperty(service.backend.engine, "reachability", { value: breaker, configurable: true });
    const userId = await service.backend.write((db) => db.insert("users", { name: "r", banned: false }));
    const sessionId = await service.backend.write((db) =>
      db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
    );
    const s = await RawSocket.open(`ws://127.0.0.1:${service.port}/api/sync`);
    s.send({ type: "connect", v: 1, token: await signToken(keys, { sub: userId, sessionId }) });
    expect(await s.next((m) => m.type === "connected")).toMatchObject({ authenticated: true });

    // A commit touching the session re-checks the identity, which meets the outage.
    outage = new AppError("DATABASE_UNAVAILABLE", "down");
    await service.backend.write((db) => db.patch("sessions", sessionId, { touchedAt: Date.now() }));
    await eventually(() => expect(breaker.waiting).toBe(1));
    s.send({ type: "query", id: "q", path: "messages:whoami", args: {} });
    outage = null;
    // Nothing retries by itself (the sweep is an hour away): the request still waits.
    const checksBefore = checks;
    s.send({ type: "ping" });
    expect(await s.next((m) => m.type === "pong")).toEqual({ type: "pong" });
    expect(s.pending()).toEqual([]);
    expect(checks).toBe(checksBefore);

    breaker.answer();
    expect(await s.next((m) => m.id === "q")).toEqual({ type: "result", id: "q", value: userId });
    expect(checks).toBeGreaterThan(checksBefore);
    expect(s.pending().filter((m) => m.type === "auth_error")).toEqual([]);
    s.close();
  });
});
