/** `rateLimitKey` (GHSA-p6v2-xcpg-h6xw): one key per IPv4 address, per IPv6 /64. */
import { describe, expect, it } from "vitest";
import { rateLimitKey } from "../../../src/backend/server.ts";

describe("rateLimitKey", () => {
  it("keeps an IPv4 address as it is", () => {
    expect(rateLimitKey("203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitKey("203.0.113.8")).not.toBe(rateLimitKey("203.0.113.7"));
  });

  it("gives every address of one IPv6 /64 the same key (rotation inside it gains nothing)", () => {
    const keys = [
      "2001:db8:1:2::1",
      "2001:db8:1:2:ffff:ffff:ffff:ffff",
      "2001:0db8:0001:0002:a:b:c:d",
      "2001:DB8:1:2:0:0:0:9",
      "[2001:db8:1:2::42]",
      "2001:db8:1:2::7%eth0",
    ].map(rateLimitKey);
    expect(new Set(keys)).toEqual(new Set(["2001:db8:1:2::/64"]));
  });

  it("keeps different /64 networks apart", () => {
    expect(rateLimitKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(rateLimitKey("2001:db8:1:3::1")).not.toBe(rateLimitKey("2001:db8:1:2::1"));
    expect(rateLimitKey("::1")).toBe("0:0:0:0::/64");
  });

  it("maps an IPv4-mapped IPv6 address to its IPv4 address, in either notation", () => {
    expect(rateLimitKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitKey("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(rateLimitKey("0:0:0:0:0:ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("returns anything that is not an IP address unchanged (its own key, never a shared one)", () => {
    for (const odd of ["", "unknown", "2001:db8::1::2", "999.1.1.1", "1.2.3"])
      expect(rateLimitKey(odd)).toBe(odd);
  });
});
