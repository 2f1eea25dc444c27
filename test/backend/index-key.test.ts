import { describe, expect, it } from "vitest";
import { encodeKey, inRange, prefixEnd } from "../../src/backend/storage/indexes/key.ts";

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cross-type order documented in index-key.ts. */
function rank(x: unknown): number {
  if (x === undefined) return 0;
  if (x === null) return 1;
  if (typeof x === "number") return 2;
  if (typeof x === "boolean") return 3;
  if (typeof x === "string") return 4;
  if (Array.isArray(x)) return 5;
  return 6;
}

/** The order JavaScript gives: `<` on numbers (-0 equals 0) and strings (UTF-16 code units). */
function jsCompare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if (typeof a === "number" || typeof a === "string" || typeof a === "boolean") {
    return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  }
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    for (let i = 0; i < Math.min(a.length, bb.length); i++) {
      const c = jsCompare(a[i], bb[i]);
      if (c) return c;
    }
    return Math.sign(a.length - bb.length);
  }
  return 0;
}

const keyCompare = (a: unknown, b: unknown) => Math.sign(Buffer.compare(encodeKey([a]), encodeKey([b])));

const SPECIAL_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  1e-300,
  -1e-300,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  2 ** 53 + 2,
  Infinity,
  -Infinity,
  0.1,
  0.2,
  0.30000000000000004,
  1700000000000,
];
const CHARS = [
  "",
  "a",
  "b",
  "A",
  "z",
  "\0",
  "\u0001",
  "é",
  "ß",
  "中",
  "\u00ff",
  "\u0100",
  "\ud7ff",
  "\ue000",
  "\uffff",
  "😀",
  "𝄞",
  "\ud83d",
  "\ude00",
];

function randomNumber(r: () => number): number {
  const pick = r();
  if (pick < 0.3) return SPECIAL_NUMBERS[Math.floor(r() * SPECIAL_NUMBERS.length)];
  if (pick < 0.6) return Math.floor((r() - 0.5) * 2000);
  if (pick < 0.8) return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
  return (r() - 0.5) * Number.MAX_VALUE;
}

function randomString(r: () => number): string {
  let s = "";
  const n = Math.floor(r() * 5);
  for (let i = 0; i < n; i++) s += CHARS[Math.floor(r() * CHARS.length)];
  return s;
}

function randomValue(r: () => number, depth = 0): unknown {
  const pick = r();
  if (pick < 0.05) return undefined;
  if (pick < 0.1) return null;
  if (pick < 0.4) return randomNumber(r);
  if (pick < 0.5) return r() < 0.5;
  if (pick < 0.85 || depth > 1) return randomString(r);
  return Array.from({ length: Math.floor(r() * 3) }, () => randomValue(r, depth + 1));
}

describe("index key encoding", () => {
  it("orders numbers like JavaScript, with -0 equal to 0", () => {
    const sorted = [...SPECIAL_NUMBERS].sort((a, b) => a - b);
    for (let i = 0; i < sorted.length; i++) {
      for (let j = 0; j < sorted.length; j++) {
        expect(keyCompare(sorted[i], sorted[j]), `${sorted[i]} vs ${sorted[j]}`).toBe(
          jsCompare(sorted[i], sorted[j]),
        );
      }
    }
    expect(encodeKey([-0]).equals(encodeKey([0]))).toBe(true);
  });

  it("orders strings like JavaScript, including unicode, surrogates and embedded NUL", () => {
    const cases: [string, string][] = [
      ["", "\0"],
      ["a", "a\0"],
      ["a\0", "a\0\0"],
      ["a\0b", "a\u0001"],
      ["a\0", "ab"],
      ["Z", "a"],
      ["\uffff", "😀"], // UTF-16: the surrogate 0xd83d sorts before 0xffff
      ["\ue000", "𝄞"],
      ["\ud83d", "\ude00"], // lone surrogates must stay distinct
      ["\ud800", "\ufffd"],
    ];
    for (const [a, b] of cases) {
      expect(keyCompare(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(jsCompare(a, b));
      expect(keyCompare(b, a)).toBe(jsCompare(b, a));
    }
  });

  it("orders booleans, null, undefined and mixed types", () => {
    const ordered = [undefined, null, -Infinity, 0, Infinity, false, true, "", "a", [], [null], [1], ["a"]];
    for (let i = 0; i + 1 < ordered.length; i++) {
      expect(keyCompare(ordered[i], ordered[i + 1]), `${i}`).toBe(-1);
    }
  });

  it("matches JavaScript order for random values and tuples (property test)", () => {
    const r = rng(12345);
    for (let n = 0; n < 4000; n++) {
      const a = randomValue(r);
      const b = r() < 0.1 ? a : randomValue(r);
      const expected = jsCompare(a, b);
      expect(keyCompare(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(expected);
      // Tuples compare field by field: the second field only decides ties of the first.
      const c = randomValue(r);
      const d = randomValue(r);
      const tuple = Math.sign(Buffer.compare(encodeKey([a, c]), encodeKey([b, d])));
      expect(tuple).toBe(expected || jsCompare(c, d));
    }
  });

  it("prefix ranges contain exactly the keys that start with the prefix", () => {
    const prefix = encodeKey(["alice"]);
    const range = { lower: prefix, upper: prefixEnd(prefix) };
    for (const inside of [
      ["alice"],
      ["alice", 1],
      ["alice", "zzz"],
      ["alice", [1, 2]],
      ["alice", { a: 1 }],
    ]) {
      expect(inRange(encodeKey(inside), range), JSON.stringify(inside)).toBe(true);
    }
    for (const outside of [["alic"], ["alice\0"], ["alicf"], ["bob"], [null], [1]]) {
      expect(inRange(encodeKey(outside), range), JSON.stringify(outside)).toBe(false);
    }
  });

  it("refuses values that cannot be indexed", () => {
    expect(() => encodeKey([Symbol("x")])).toThrow(TypeError);
    expect(() => encodeKey([() => 1])).toThrow(TypeError);
  });
});
