/** The one backoff: doubling from the first wait up to the cap, spread by the policy's jitter. */
import { describe, expect, it } from "vitest";
import { RETRY_POLICIES } from "../../src/backend/retry/policies.ts";
import { type BackoffPolicy, backoffDelayMs } from "../../src/protocol/backoff.ts";

const plain: BackoffPolicy = { firstMs: 100, maxMs: 1000, jitter: "none" };

describe("backoffDelayMs", () => {
  it("doubles from the first wait per attempt and stops at the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((attempt) => backoffDelayMs(plain, attempt))).toEqual([
      100, 200, 400, 800, 1000, 1000, 1000,
    ]);
  });

  it("takes a negative or fractional attempt as the whole number of failures before it", () => {
    expect(backoffDelayMs(plain, -3)).toBe(100);
    expect(backoffDelayMs(plain, 1.7)).toBe(200);
  });

  it("stays at the cap however many attempts failed (no Infinity, no NaN)", () => {
    expect(backoffDelayMs(plain, 5000)).toBe(1000);
    expect(backoffDelayMs({ firstMs: 0, maxMs: 10, jitter: "none" }, 5000)).toBe(0);
    expect(backoffDelayMs({ ...plain, maxMs: Number.POSITIVE_INFINITY }, 5000)).toBe(100 * 2 ** 52);
  });

  it("equal jitter waits between half the ceiling and all of it", () => {
    const equal: BackoffPolicy = { ...plain, jitter: "equal" };
    expect(backoffDelayMs(equal, 2, () => 0)).toBe(200);
    expect(backoffDelayMs(equal, 2, () => 0.5)).toBe(300);
    expect(backoffDelayMs(equal, 2, () => 0.999)).toBeCloseTo(399.8);
    expect(backoffDelayMs(equal, 9, () => 0)).toBe(500);
  });

  it("full jitter waits between zero and the ceiling", () => {
    const full: BackoffPolicy = { ...plain, jitter: "full" };
    expect(backoffDelayMs(full, 3, () => 0)).toBe(0);
    expect(backoffDelayMs(full, 3, () => 0.25)).toBe(200);
    expect(backoffDelayMs(full, 9, () => 0.5)).toBe(500);
  });

  it("draws from Math.random by default, within the jitter's bounds", () => {
    for (let i = 0; i < 200; i++) {
      const equal = backoffDelayMs({ ...plain, jitter: "equal" }, 1);
      expect(equal).toBeGreaterThanOrEqual(100);
      expect(equal).toBeLessThan(200);
      const full = backoffDelayMs({ ...plain, jitter: "full" }, 1);
      expect(full).toBeGreaterThanOrEqual(0);
      expect(full).toBeLessThan(200);
    }
  });
});

describe("the platform's named policies", () => {
  it("each starts at a positive wait no larger than its cap", () => {
    for (const [name, policy] of Object.entries(RETRY_POLICIES)) {
      expect(policy.firstMs, name).toBeGreaterThan(0);
      expect(policy.maxMs, name).toBeGreaterThanOrEqual(policy.firstMs);
    }
  });

  it("keep the waits the hand-written formulas had", () => {
    const ceilings = (policy: BackoffPolicy, attempts: number) =>
      Array.from({ length: attempts }, (_, attempt) =>
        backoffDelayMs({ ...policy, jitter: "none" }, attempt),
      );
    expect(ceilings(RETRY_POLICIES.replicaRest, 7)).toEqual([250, 500, 1000, 2000, 4000, 8000, 10_000]);
    expect(ceilings(RETRY_POLICIES.standbyAckPoll, 7)).toEqual([1, 2, 4, 8, 16, 20, 20]);
    expect(ceilings(RETRY_POLICIES.liveQueryRetry, 6)).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    expect(ceilings(RETRY_POLICIES.writeLockWait, 8)).toEqual([1, 2, 4, 8, 16, 32, 50, 50]);
    // Conflict retries start at attempt 1 (the first run is attempt 1): 4, 8 … 100 ms.
    expect(ceilings(RETRY_POLICIES.transactionConflict, 8).slice(1)).toEqual([4, 8, 16, 32, 64, 100, 100]);
    expect(RETRY_POLICIES.transactionConflict.jitter).toBe("full");
    expect(RETRY_POLICIES.notifyReconnect.jitter).toBe("equal");
  });
});
