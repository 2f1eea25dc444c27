/**
 * `compareValues` is the index key order as a comparator: for any indexable values its sign equals
 * the sign of comparing their encoded keys, across types, for astral and private-use strings, lone
 * surrogates, -0, NaN, arrays and objects.
 */
import { describe, expect, it } from "vitest";
import { compareValues as publicCompareValues } from "../../src/backend/server.ts";
import { compareValues, encodeKey } from "../../src/backend/storage/indexes/key.ts";

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const keyCompare = (a: unknown, b: unknown) => Math.sign(Buffer.compare(encodeKey([a]), encodeKey([b])));
const signOf = (a: unknown, b: unknown) => Math.sign(compareValues(a, b));

const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  -1e-300,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Infinity,
  -Infinity,
  NaN,
  -NaN,
  1e15,
];
const CHARS = [
  "",
  "a",
  "A",
  "\0",
  "é",
  "中",
  "\ud7ff",
  "\ue000",
  "\uf8ff",
  "\uffff",
  "😀",
  "𝄞",
  "\ud83d",
  "\ude00",
];

function randomString(r: () => number): string {
  let s = "";
  for (let n = Math.floor(r() * 4); n > 0; n--) s += CHARS[Math.floor(r() * CHARS.length)];
  return s;
}

function randomValue(r: () => number, depth = 0): unknown {
  const pick = r();
  if (pick < 0.05) return undefined;
  if (pick < 0.1) return null;
  if (pick < 0.35)
    return r() < 0.5 ? NUMBERS[Math.floor(r() * NUMBERS.length)] : Math.floor((r() - 0.5) * 100);
  if (pick < 0.45) return r() < 0.5;
  if (pick < 0.75 || depth > 1) return randomString(r);
  if (pick < 0.88) return Array.from({ length: Math.floor(r() * 3) }, () => randomValue(r, depth + 1));
  const obj: Record<string, unknown> = {};
  for (let n = Math.floor(r() * 3); n > 0; n--) obj[randomString(r)] = randomValue(r, depth + 1);
  return obj;
}

describe("compareValues", () => {
  it("is exported through the platform's public entry point", () => {
    expect(publicCompareValues).toBe(compareValues);
  });

  it("orders U+E000 and U+FFFF after astral characters, like the keys (UTF-16 code units)", () => {
    expect(signOf("😀", "\ue000")).toBe(-1);
    expect(signOf("𝄞", "\uffff")).toBe(-1);
    expect(signOf("\ue000", "😀")).toBe(keyCompare("\ue000", "😀"));
  });

  it("orders types as the keys do: undefined < null < numbers < false < true < strings < arrays < objects", () => {
    const ordered = [
      undefined,
      null,
      -Infinity,
      -0,
      0.5,
      Infinity,
      false,
      true,
      "",
      "a",
      [],
      [null],
      ["a"],
      {},
      { a: 1 },
    ];
    for (let i = 0; i < ordered.length; i++) {
      for (let j = 0; j < ordered.length; j++) {
        const expected = i === j || (Object.is(ordered[i], -0) && ordered[j] === 0) ? 0 : Math.sign(i - j);
        expect(signOf(ordered[i], ordered[j]), `${i} vs ${j}`).toBe(expected);
        expect(keyCompare(ordered[i], ordered[j]), `${i} vs ${j}`).toBe(expected);
      }
    }
    expect(signOf(-0, 0)).toBe(0);
  });

  it("agrees with the encoded key order for random values (property test)", () => {
    const r = rng(8_6);
    for (let n = 0; n < 20_000; n++) {
      const a = randomValue(r);
      const b = r() < 0.1 ? structuredClone(a) : randomValue(r);
      expect(signOf(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(keyCompare(a, b));
    }
  });

  it("refuses values that cannot be indexed, like encodeKey", () => {
    expect(() => compareValues(Symbol("x"), 1)).toThrow(TypeError);
    expect(() => compareValues(1n, 1n)).toThrow(TypeError);
  });
});
