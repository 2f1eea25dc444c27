/**
 * The `JWKS` variable's format (`src/auth/keys/stored-jwks.ts`): parsing it refuses anything but a non-empty
 * list of key rows with a clear message, fills in the creation time and the default algorithm;
 * the public key set carries only the public halves, each with its `kid`, `alg` and `use`; and
 * serializing table rows gives back what parsing reads.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_ALG,
  parseStoredJwks,
  publicJwksOf,
  serializeJwks,
} from "../../src/auth/keys/stored-jwks.ts";

const PUBLIC = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };
const row = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  publicKey: JSON.stringify(PUBLIC),
  privateKey: `encrypted-${id}`,
  createdAt: 1_700_000_000_000,
  ...extra,
});
// Each test uses values of its own: the parsed and public sets are cached per value.
const json = (rows: unknown) => JSON.stringify(rows);

describe("parseStoredJwks", () => {
  it("keeps every member of a row, in order", () => {
    const rows = [row("a", { alg: "EdDSA" }), row("b", { alg: "ES256" })];
    expect(parseStoredJwks(json(rows))).toEqual(rows);
  });

  it("gives a row without alg the default, RS256", () => {
    expect(DEFAULT_ALG).toBe("RS256");
    const [parsed] = parseStoredJwks(json([row("no-alg")]));
    expect(parsed.alg).toBe("RS256");
  });

  it("reads a creation time given as a date string", () => {
    const [parsed] = parseStoredJwks(json([row("dated", { createdAt: "2024-01-02T03:04:05.000Z" })]));
    expect(parsed.createdAt).toBe(Date.UTC(2024, 0, 2, 3, 4, 5));
  });

  it("refuses text that is not JSON, naming the command that makes the value", () => {
    expect(() => parseStoredJwks("not json")).toThrow(
      new Error(
        "JWKS is not valid JSON; run `npm run cli -- run auth:getLatestJwks` and store its output in JWKS",
      ),
    );
  });

  it.each([
    ["an object", "{}"],
    ["an empty array", "[]"],
    ["a string", '"keys"'],
    ["null", "null"],
  ])("refuses %s: a non-empty array is required", (_, value) => {
    expect(() => parseStoredJwks(value)).toThrow(new Error("JWKS must be a non-empty JSON array of keys"));
  });

  it.each([
    ["null", null],
    ["a string", "key"],
    ["no id", { publicKey: "{}", privateKey: "p" }],
    ["a numeric id", { id: 1, publicKey: "{}", privateKey: "p" }],
    ["no publicKey", { id: "k", privateKey: "p" }],
    ["an object publicKey", { id: "k", publicKey: {}, privateKey: "p" }],
    ["no privateKey", { id: "k", publicKey: "{}" }],
    ["a numeric privateKey", { id: "k", publicKey: "{}", privateKey: 7 }],
  ])("refuses a row that is %s, naming its position", (_, bad) => {
    expect(() => parseStoredJwks(json([row("good"), bad]))).toThrow(
      new Error("JWKS key 1 lacks id, publicKey or privateKey"),
    );
  });

  it("answers the same value with the same rows", () => {
    const value = json([row("same")]);
    expect(parseStoredJwks(value)).toBe(parseStoredJwks(value));
  });

  it("keeps a few values parsed at once (old and new set during a rotation), not every value ever seen", () => {
    const current = json([row("current")]);
    const rotated = json([row("rotated")]);
    const first = parseStoredJwks(current);
    parseStoredJwks(rotated);
    expect(parseStoredJwks(current)).toBe(first);
    // Ever-new values (a misconfigured env store) do not grow the cache without bound.
    for (let i = 0; i < 40; i++) {
      const [parsed] = parseStoredJwks(json([row(`many-${i}`)]));
      expect(parsed.id).toBe(`many-${i}`);
    }
    const again = parseStoredJwks(current);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});

describe("publicJwksOf", () => {
  it("carries each public key with its kid, alg and use, and no private half", () => {
    const value = json([row("pub-a", { alg: "EdDSA" }), row("pub-b")]);
    const set = JSON.parse(publicJwksOf(value));
    expect(set).toEqual({
      keys: [
        { ...PUBLIC, alg: "EdDSA", use: "sig", kid: "pub-a" },
        { ...PUBLIC, alg: "RS256", use: "sig", kid: "pub-b" },
      ],
    });
    expect(publicJwksOf(value)).not.toContain("encrypted-");
  });

  it("overrides an alg, use or kid inside the stored public key with the row's", () => {
    const publicKey = JSON.stringify({ ...PUBLIC, alg: "none", use: "enc", kid: "other" });
    const set = JSON.parse(publicJwksOf(json([row("row-kid", { publicKey, alg: "EdDSA" })])));
    expect(set.keys[0]).toMatchObject({ alg: "EdDSA", use: "sig", kid: "row-kid" });
  });

  it("refuses what parseStoredJwks refuses", () => {
    expect(() => publicJwksOf("[]")).toThrow("JWKS must be a non-empty JSON array of keys");
  });

  it("still answers each value correctly after many different values", () => {
    for (let i = 0; i < 40; i++) {
      const set = JSON.parse(publicJwksOf(json([row(`pub-many-${i}`)])));
      expect(set.keys.map((k: { kid: string }) => k.kid)).toEqual([`pub-many-${i}`]);
    }
  });
});

describe("serializeJwks", () => {
  it("stores dates as milliseconds and a missing or null alg as the default", () => {
    const created = new Date(Date.UTC(2025, 5, 6));
    const value = serializeJwks([
      { id: "s1", publicKey: "{}", privateKey: "p1", createdAt: created, alg: null },
      { id: "s2", publicKey: "{}", privateKey: "p2", createdAt: 42 },
      { id: "s3", publicKey: "{}", privateKey: "p3", createdAt: 43, alg: "ES256" },
    ]);
    expect(JSON.parse(value)).toEqual([
      { id: "s1", publicKey: "{}", privateKey: "p1", createdAt: created.getTime(), alg: "RS256" },
      { id: "s2", publicKey: "{}", privateKey: "p2", createdAt: 42, alg: "RS256" },
      { id: "s3", publicKey: "{}", privateKey: "p3", createdAt: 43, alg: "ES256" },
    ]);
  });

  it("round-trips through parseStoredJwks", () => {
    const rows = [row("rt-1", { alg: "EdDSA" }), row("rt-2", { alg: "RS256" })];
    expect(parseStoredJwks(serializeJwks(rows))).toEqual(rows);
  });
});
