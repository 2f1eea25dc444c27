/**
 * The one throttle of unknown-key refetches (src/backend/auth/unknown-key-refetch.ts), used by the
 * key catch-up and the remote JWKS source: one round at a time, callers waiting share the next
 * round, and rounds that counted begin at least the interval apart. The sources' own tests:
 * jwks-source.test.ts, jwt-verifier.test.ts, test/postgres/key-rotation.test.ts.
 */
import { describe, expect, it } from "vitest";
import { UnknownKeyRefetch } from "../../src/backend/auth/unknown-key-refetch.ts";

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets every promise callback queued now run (no timer). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe("UnknownKeyRefetch", () => {
  it("runs one round for every caller waiting before it began", async () => {
    let rounds = 0;
    const refetch = new UnknownKeyRefetch({ round: async () => ++rounds, minIntervalMs: 0 });
    const outcomes = await Promise.all([refetch.next(), refetch.next(), refetch.next()]);
    expect(rounds).toBe(1);
    expect(outcomes).toEqual([1, 1, 1]);
  });

  it("lets callers arriving during a round share the next one, begun once the first ended", async () => {
    const first = deferred<void>();
    let rounds = 0;
    const refetch = new UnknownKeyRefetch<number>({
      round: async () => {
        const n = ++rounds;
        if (n === 1) await first.promise;
        return n;
      },
      minIntervalMs: 0,
    });
    const early = refetch.next();
    await settle();
    expect(rounds).toBe(1);
    const late = [refetch.next(), refetch.next()];
    await settle();
    expect(rounds).toBe(1); // the running round must end first
    first.resolve();
    expect(await early).toBe(1);
    expect(await Promise.all(late)).toEqual([2, 2]);
    expect(rounds).toBe(2);
  });

  it("begins a round that counted no sooner than the interval after the last, on its clock", async () => {
    let now = 1_000;
    let rounds = 0;
    const refetch = new UnknownKeyRefetch({
      round: async () => {
        rounds++;
        refetch.began();
      },
      minIntervalMs: 60_000,
      now: () => now,
    });
    await refetch.next();
    expect(rounds).toBe(1);
    expect(refetch.lastBeganAt).toBe(1_000);
    now = 1_000 + 59_990;
    expect(refetch.waitMs()).toBe(10);
    const waiting = refetch.next();
    await settle();
    expect(rounds).toBe(1); // 10 ms of the interval left: a timer, not a microtask, begins it
    await waiting;
    expect(rounds).toBe(2);
  });

  it("does not hold back the next round after one that did not count", async () => {
    let rounds = 0;
    const refetch = new UnknownKeyRefetch({ round: async () => void rounds++, minIntervalMs: 60_000 });
    await refetch.next();
    expect(refetch.waitMs()).toBeLessThanOrEqual(0);
    const next = refetch.next();
    await settle();
    expect(rounds).toBe(2);
    await next;
  });
});
