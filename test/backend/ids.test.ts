import { describe, expect, it } from "vitest";
import { ID_LENGTH, idTag, newId, tableTag } from "../../src/backend/ids.ts";

describe("document ids", () => {
  it("are unique across many draws of randomness, each well formed and tagged", () => {
    const tag = tableTag("messages");
    // Far more ids than one draw of randomness serves: a batch served twice would repeat ids.
    const ids = Array.from({ length: 20_000 }, () => newId(tag));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toHaveLength(ID_LENGTH);
      expect(idTag(id)).toBe(tag);
    }
  });

  it("use every character of the alphabet at every random position about equally", () => {
    const ids = Array.from({ length: 32_000 }, () => newId(tableTag("t")));
    // The first, a middle and the last random character (17 random bytes give 26 full ones).
    for (const position of [0, 12, 25]) {
      const counts = new Map<string, number>();
      for (const id of ids) counts.set(id[position], (counts.get(id[position]) ?? 0) + 1);
      expect(counts.size).toBe(32);
      // 1,000 expected per character; ±25 % is beyond 7 standard deviations (σ ≈ 31).
      for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(250);
    }
  });
});
