/**
 * `consumeStep`, the one decision both Better Auth lines' stores share: a window counts from the
 * last request, and a request after a whole quiet window starts the count again.
 */
import { describe, expect, it } from "vitest";
import { consumeStep } from "../../src/auth/rate-limit/store.ts";

const rule = { window: 60, max: 2 };
const allowed = { allowed: true, retryAfter: null };

describe("consumeStep", () => {
  it("starts a count at the first request", () => {
    expect(consumeStep(undefined, rule, 5_000)).toEqual({
      next: { count: 1, lastRequest: 5_000 },
      verdict: allowed,
    });
  });

  it("counts up to the limit, then refuses with the seconds until the window frees up", () => {
    expect(consumeStep({ count: 1, lastRequest: 1_000 }, rule, 2_000)).toEqual({
      next: { count: 2, lastRequest: 2_000 },
      verdict: allowed,
    });
    // 60 s window from the last request at 1 s, asked at 20.5 s: 40.5 s left, rounded up.
    expect(consumeStep({ count: 2, lastRequest: 1_000 }, rule, 20_500)).toEqual({
      verdict: { allowed: false, retryAfter: 41 },
    });
  });

  it("starts again exactly when a whole window has passed since the last request", () => {
    expect(consumeStep({ count: 2, lastRequest: 1_000 }, rule, 60_999)).toEqual({
      verdict: { allowed: false, retryAfter: 1 },
    });
    expect(consumeStep({ count: 2, lastRequest: 1_000 }, rule, 61_000)).toEqual({
      next: { count: 1, lastRequest: 61_000 },
      verdict: allowed,
    });
  });
});
