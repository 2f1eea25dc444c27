/** The client address of a request (`TRUSTED_PROXIES`, `X-Forwarded-For`) and its rate-limit key. */
import { describe, expect, it } from "vitest";
import {
  clientAddress,
  normalizeAddress,
  parseTrustedProxies,
  rateLimitKey,
} from "../../src/backend/client-address.ts";

describe("clientAddress", () => {
  const proxies = parseTrustedProxies("10.0.0.0/8, 127.0.0.1, fd00::/8");

  it("is the socket's peer unless that peer is a trusted proxy", () => {
    expect(clientAddress("203.0.113.9", "198.51.100.1", proxies)).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9", "198.51.100.1", parseTrustedProxies(undefined))).toBe("203.0.113.9");
    expect(clientAddress("::ffff:203.0.113.9", undefined, proxies)).toBe("203.0.113.9");
    expect(clientAddress(undefined, "198.51.100.1", proxies)).toBeUndefined();
  });

  it("takes the right-most X-Forwarded-For hop that is not a trusted proxy", () => {
    expect(clientAddress("127.0.0.1", "198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientAddress("::ffff:127.0.0.1", "6.6.6.6, 198.51.100.1, 10.2.3.4", proxies)).toBe(
      "198.51.100.1",
    );
    expect(clientAddress("10.0.0.1", "2001:db8::7, fd00::1", proxies)).toBe("2001:db8::7");
    // Every hop trusted: the left-most is the client.
    expect(clientAddress("127.0.0.1", "10.9.9.9, 10.1.1.1", proxies)).toBe("10.9.9.9");
    // Garbage ends the walk at the last good address (the proxy that forwarded it).
    expect(clientAddress("127.0.0.1", "198.51.100.1, not-an-ip, 10.1.1.1", proxies)).toBe("10.1.1.1");
    expect(clientAddress("127.0.0.1", "", proxies)).toBe("127.0.0.1");
  });

  it("refuses a TRUSTED_PROXIES entry that is neither an address nor a CIDR", () => {
    for (const bad of ["10.0.0.0/33", "localhost", "10.0.0.0/x", "fd00::/129"]) {
      expect(() => parseTrustedProxies(bad), bad).toThrow(/TRUSTED_PROXIES/);
    }
    expect(parseTrustedProxies(" , ").has("127.0.0.1")).toBe(false);
  });
});

describe("rateLimitKey", () => {
  it("keys IPv4 addresses one by one and IPv6 addresses by their /64", () => {
    expect(rateLimitKey("203.0.113.7")).toBe("203.0.113.7");
    expect(rateLimitKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    const same = [
      "2001:db8:1:2::1",
      "2001:db8:1:2:ffff:1:2:3",
      "2001:0db8:0001:0002::abcd",
      "[2001:db8:1:2::9]",
    ];
    expect(new Set(same.map(rateLimitKey))).toEqual(new Set(["2001:db8:1:2::/64"]));
    expect(rateLimitKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(rateLimitKey("::1")).toBe("0:0:0:0::/64");
    expect(rateLimitKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(rateLimitKey("not an address")).toBe("not an address");
  });

  it("normalises an address the way clients are counted", () => {
    expect(normalizeAddress(" [2001:db8::1] ")).toBe("2001:db8::1");
  });
});
