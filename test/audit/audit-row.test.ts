/**
 * The bounds of a stored audit event: every field clipped to its limit, `details` JSON of at most
 * 1000 characters whatever it is given (keys dropped from the end until it fits), only plain
 * values inside, and CLI times parsed or refused.
 */
import { describe, expect, it } from "vitest";
import { parseTime } from "../../src/auth/audit/cli.ts";
import { AUDIT_FIELD_LIMITS, auditRow } from "../../src/auth/audit/events.ts";

describe("audit rows", () => {
  it("clips every field to its limit and leaves absent ones out", () => {
    const long = "x".repeat(5000);
    const row = auditRow({
      type: "sign-in.failed",
      actorId: long,
      targetId: long,
      email: `${"A".repeat(400)}@EXAMPLE.COM`,
      ipAddress: long,
      userAgent: long,
      time: 1234,
    });
    expect(row.actorId).toHaveLength(AUDIT_FIELD_LIMITS.actorId);
    expect(row.targetId).toHaveLength(AUDIT_FIELD_LIMITS.targetId);
    expect(row.email).toHaveLength(AUDIT_FIELD_LIMITS.email);
    expect(row.email).toBe(row.email?.toLowerCase());
    expect(row.ipAddress).toHaveLength(AUDIT_FIELD_LIMITS.ipAddress);
    expect(row.userAgent).toHaveLength(AUDIT_FIELD_LIMITS.userAgent);
    expect(row.time).toBe(1234);
    expect(auditRow({ type: "sign-out", actorId: null, email: "" })).toEqual({
      type: "sign-out",
      time: expect.any(Number),
      details: "{}",
    });
  });

  it("keeps details within 1000 characters of JSON, with plain values only", () => {
    const many: Record<string, unknown> = {};
    for (let i = 0; i < 50; i++) many[`key${i}`] = "v".repeat(500);
    const row = auditRow({ type: "env.changed", details: many });
    expect(row.details.length).toBeLessThanOrEqual(AUDIT_FIELD_LIMITS.details);
    const parsed = JSON.parse(row.details);
    expect(Object.keys(parsed).length).toBeGreaterThan(0);
    for (const value of Object.values(parsed)) expect(value).toHaveLength(AUDIT_FIELD_LIMITS.detail);

    const odd = JSON.parse(
      auditRow({
        type: "user.banned",
        details: {
          expires: new Date(5000),
          nested: { password: "hunter22" },
          infinite: Number.POSITIVE_INFINITY,
          names: Array.from({ length: 30 }, (_, i) => `N${i}`),
          gone: undefined,
        },
      }).details,
    );
    expect(odd.expires).toBe(5000);
    expect(odd.nested).toBeNull(); // never a structure a request body could be stored through
    expect(odd.infinite).toBeNull();
    expect(odd.names).toHaveLength(20);
    expect("gone" in odd).toBe(false);
  });

  it("parses CLI times: durations back from now and ISO times; refuses the rest", () => {
    const now = Date.UTC(2026, 0, 31, 12);
    expect(parseTime("90m", now)).toBe(now - 90 * 60_000);
    expect(parseTime("1h", now)).toBe(now - 3_600_000);
    expect(parseTime("7d", now)).toBe(now - 7 * 86_400_000);
    expect(parseTime("2026-01-31T00:00:00Z", now)).toBe(Date.UTC(2026, 0, 31));
    expect(() => parseTime("yesterday", now)).toThrow(/not a time/);
  });
});
