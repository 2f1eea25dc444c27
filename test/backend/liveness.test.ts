/**
 * The one instance liveness rule (src/backend/liveness.ts) that presence's heartbeats and the
 * scheduler's leases follow: renewed every period, dead after three periods without a renewal.
 * Presence and the scheduler acting on it: test/sync/presence*.test.ts, test/scheduler/.
 */
import { describe, expect, it } from "vitest";
import {
  expiresAt,
  isAlive,
  MISSED_RENEWALS,
  renewedEvery,
  renewedWithin,
} from "../../src/backend/liveness.ts";

describe("liveness", () => {
  it("takes a heartbeat of period p for dead after three periods without a renewal", () => {
    const beat = renewedEvery(10_000);
    expect(beat).toEqual({ periodMs: 10_000, timeoutMs: 30_000 });
    expect(isAlive(beat, 1_000, 31_000)).toBe(true);
    expect(isAlive(beat, 1_000, 31_001)).toBe(false);
  });

  it("renews a lease of timeout t every third of it, never more often than every 50 ms", () => {
    expect(renewedWithin(10_000)).toEqual({ periodMs: 3333, timeoutMs: 10_000 });
    expect(renewedWithin(60)).toEqual({ periodMs: 50, timeoutMs: 60 });
    expect(MISSED_RENEWALS).toBe(3);
  });

  it("states a lease's end and a heartbeat's staleness by the same rule", () => {
    const lease = renewedWithin(9_000);
    expect(expiresAt(lease, 5_000)).toBe(14_000);
    expect(isAlive(lease, 5_000, 14_000)).toBe(true);
    expect(isAlive(lease, 5_000, 14_001)).toBe(false);
  });
});
