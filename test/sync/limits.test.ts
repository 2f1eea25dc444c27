/**
 * The sync limits in force: the defaults are the ones docs/protocol.md "Limits and close codes"
 * promises (read from its tables, so the two cannot drift apart), options override exactly the
 * limits they name, and the anonymous tier never exceeds the general limit.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LIMITS,
  resolveLimits,
  type SyncLimitOptions,
  type SyncLimits,
  type TierLimits,
  tierLimits,
} from "../../src/backend/sync/limits.ts";

const protocolDoc = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");

/** A documented default: `1 MiB`, `1000`, `60 s`; `same` is the general value. */
function documentedValue(text: string, general?: number): number | undefined {
  const value = text.trim();
  if (value === "same") return general;
  if (value === "—") return undefined;
  const match = value.match(/^([\d,]+) (MiB|s)?$/) ?? value.match(/^([\d,]+)()$/);
  if (!match) throw new Error(`unreadable default in docs/protocol.md: ${JSON.stringify(value)}`);
  const n = Number(match[1].replaceAll(",", ""));
  return match[2] === "MiB" ? n * 1024 * 1024 : match[2] === "s" ? n * 1000 : n;
}

/** The limits of the doc's tables: option name → default and (first table) anonymous default. */
function documentedLimits(): Map<string, { general: number; anonymous?: number }> {
  const rows = new Map<string, { general: number; anonymous?: number }>();
  for (const line of protocolDoc.split("\n")) {
    const cells = line.split("|").slice(1, -1);
    const option = cells[0]?.match(/\(`(\w+)`\)/)?.[1];
    if (!option) continue;
    const general = documentedValue(cells[1]);
    if (general === undefined) throw new Error(`no default for ${option} in docs/protocol.md`);
    // Four columns: limit, default, without identity, on excess (the server-wide table has three).
    const anonymous = cells.length === 4 ? documentedValue(cells[2], general) : undefined;
    rows.set(option, { general, anonymous });
  }
  return rows;
}

const TIER_KEYS = Object.keys(DEFAULT_LIMITS.anonymous) as (keyof TierLimits)[];

describe("defaults", () => {
  it("are the limits docs/protocol.md lists, general and without identity", () => {
    const documented = documentedLimits();
    const generalKeys = Object.keys(DEFAULT_LIMITS).filter(
      (k) => k !== "anonymous" && k !== "identityRecheckMs",
    ) as (keyof Omit<SyncLimits, "anonymous">)[];
    expect([...documented.keys()].sort()).toEqual([...generalKeys].sort());
    for (const key of generalKeys) {
      const row = documented.get(key);
      expect({ key, value: DEFAULT_LIMITS[key] }).toEqual({ key, value: row?.general });
      if (TIER_KEYS.includes(key as keyof TierLimits)) {
        const anonymous = DEFAULT_LIMITS.anonymous[key as keyof TierLimits];
        expect({ key, anonymous }).toEqual({ key, anonymous: row?.anonymous });
      }
    }
  });

  it("re-check every identity at least every 5 minutes, as docs/protocol.md says", () => {
    expect(protocolDoc).toMatch(/re-checked at least every 5 minutes/);
    expect(DEFAULT_LIMITS.identityRecheckMs).toBe(5 * 60 * 1000);
  });
});

describe("resolveLimits", () => {
  it("without options is the defaults, as a copy the caller may not change through", () => {
    const limits = resolveLimits({});
    expect(limits).toEqual(DEFAULT_LIMITS);
    limits.maxInFlight = 1;
    limits.anonymous.maxInFlight = 1;
    expect(DEFAULT_LIMITS.maxInFlight).toBe(64);
    expect(DEFAULT_LIMITS.anonymous.maxInFlight).toBe(16);
  });

  it("overrides exactly the numeric limits given, general and anonymous", () => {
    const limits = resolveLimits({ maxInFlight: 3, idleTimeoutMs: 0, anonymous: { maxSubscriptions: 7 } });
    expect(limits).toEqual({
      ...DEFAULT_LIMITS,
      maxInFlight: 3,
      idleTimeoutMs: 0,
      anonymous: { ...DEFAULT_LIMITS.anonymous, maxSubscriptions: 7 },
    });
  });

  it("ignores values that are not numbers (options from untyped configuration)", () => {
    const options = {
      maxInFlight: "3",
      maxSubscriptions: undefined,
      anonymous: { maxInFlight: "2", maxPendingBytes: null },
    } as unknown as SyncLimitOptions;
    expect(resolveLimits(options)).toEqual(DEFAULT_LIMITS);
    // A number where the anonymous limits belong does not replace them.
    expect(resolveLimits({ anonymous: 5 } as unknown as SyncLimitOptions)).toEqual(DEFAULT_LIMITS);
  });
});

describe("tierLimits", () => {
  it("gives a connection with an identity the general limits", () => {
    const limits = resolveLimits({ maxInFlight: 3 });
    expect(tierLimits(limits, false)).toBe(limits);
  });

  it("gives a connection without one its own limits, never above the general ones", () => {
    const limits = resolveLimits({
      maxInFlight: 3,
      anonymous: { maxSubscriptions: 5_000, maxPendingBytes: 10 },
    });
    expect(tierLimits(limits, true)).toEqual({
      ...DEFAULT_LIMITS.anonymous,
      maxInFlight: 3,
      maxSubscriptions: DEFAULT_LIMITS.maxSubscriptions,
      maxPendingBytes: 10,
    });
  });
});
