/** The one canonical JSON both sides key queries by: equal values give equal strings. */
import { describe, expect, it } from "vitest";
import { stableStringify } from "../../src/protocol/stable-stringify.ts";

describe("stableStringify", () => {
  it("sorts object keys at every level and drops undefined fields", () => {
    const a = { b: 1, a: { d: [1, { z: true, y: null }], c: "x" }, u: undefined };
    const b = { a: { c: "x", d: [1, { y: null, z: true }] }, b: 1 };
    expect(stableStringify(a)).toBe('{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}');
    expect(stableStringify(b)).toBe(stableStringify(a));
  });

  it("writes what JSON.stringify writes for key-sorted input", () => {
    const value = { a: [1, -2.5, 'q"\n', true, null, [], {}], b: { c: "é", d: [[0]] }, e: "" };
    expect(stableStringify(value)).toBe(JSON.stringify(value));
    expect(stableStringify([undefined, 1])).toBe("[null,1]");
    expect(stableStringify(undefined)).toBe("null");
    expect(stableStringify("x")).toBe('"x"');
  });

  it("repeats a shared (non-cyclic) object", () => {
    const shared = { x: 1 };
    expect(stableStringify({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });

  it("serializes nesting far deeper than the call stack allows", () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { k: deep };
    const text = stableStringify(deep);
    expect(text.length).toBe(1 + 50_000 * 2 + 50_000 * 6);
    expect(text.startsWith('[{"k":[{"k":')).toBe(true);
  });

  it("throws a TypeError on a cycle instead of looping", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: [cyclic] };
    expect(() => stableStringify(cyclic)).toThrow(TypeError);
  });
});
