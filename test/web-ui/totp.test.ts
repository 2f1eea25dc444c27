/** The test TOTP generator against RFC 6238 Appendix B's SHA-1 vectors (8 digits there). */
import { describe, expect, it } from "vitest";
import { hotp } from "../helpers/totp.ts";

describe("totp", () => {
  it("matches RFC 6238's SHA-1 test vectors", () => {
    const key = Buffer.from("12345678901234567890");
    const vectors: [number, string][] = [
      [59, "94287082"],
      [1111111109, "07081804"],
      [1111111111, "14050471"],
      [1234567890, "89005924"],
      [2000000000, "69279037"],
      [20000000000, "65353130"],
    ];
    for (const [seconds, code] of vectors) expect(hotp(key, Math.floor(seconds / 30), 8)).toBe(code);
  });
});
