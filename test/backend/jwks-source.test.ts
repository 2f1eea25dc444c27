/**
 * The JWKS key sources on their own: which JWK members make a key usable, how a key set is parsed,
 * indexed and cached, and how a remote JWKS endpoint (a real local HTTP server) is fetched, aged,
 * refetched and survived when it fails. Time for the remote source is its injected clock.
 */
import { sign as cryptoSign, generateKeyPairSync, type JsonWebKey } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  DynamicJwksSource,
  keyMatchesAlg,
  MAX_JWKS_BYTES,
  type ParsedKey,
  parseJwks,
  parseJwksCached,
  RemoteJwksSource,
  StaticJwksSource,
} from "../../src/backend/auth/jwks-source.ts";
import { createJwtVerifier } from "../../src/backend/auth/jwt-verifier.ts";
import { TokenError, type TokenErrorCode } from "../../src/backend/auth/token-errors.ts";

const ISS = "https://idp.example.test";
const AUD = "service-api";

type Jwk = JsonWebKey & { kid?: string; alg?: string; use?: string };

/** A fresh key pair; the public half as a JWK with the given extra members. */
function pair(type: "rsa" | "ec" | "ed25519" | "ed448", extra: Jwk = {}, modulusLength = 2048) {
  const { privateKey, publicKey } =
    type === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength })
      : type === "ec"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : type === "ed25519"
          ? generateKeyPairSync("ed25519")
          : generateKeyPairSync("ed448");
  return { privateKey, jwk: { ...publicKey.export({ format: "jwk" }), ...extra } as Jwk };
}

const rsa = pair("rsa", { kid: "r1" });
const ec = pair("ec", { kid: "e1" });

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** A token over these claims, signed with `privateKey` (`alg` picks the digest: RS256 / EdDSA). */
function token(
  privateKey: ReturnType<typeof pair>["privateKey"],
  alg: "RS256" | "ES256" | "EdDSA",
  kid?: string,
) {
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg, ...(kid !== undefined ? { kid } : {}) })}.${b64({ iss: ISS, aud: AUD, exp: now + 600 })}`;
  const digest = alg === "EdDSA" ? null : "sha256";
  const key = alg === "ES256" ? { key: privateKey, dsaEncoding: "ieee-p1363" as const } : privateKey;
  return `${input}.${cryptoSign(digest, Buffer.from(input), key).toString("base64url")}`;
}

function expectTokenError(fn: () => unknown, code: TokenErrorCode, message: string): void {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(TokenError);
  expect({ code: (thrown as TokenError).code, message: (thrown as TokenError).message }).toEqual({
    code,
    message,
  });
}

async function expectRejects(p: Promise<unknown>, code: TokenErrorCode, message: string): Promise<void> {
  const err = await p.then(
    () => new Error("expected a TokenError"),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TokenError);
  expect({ code: (err as TokenError).code, message: (err as TokenError).message }).toEqual({ code, message });
}

/** A JSON JWKS text no other call has produced (a unique unknown member), so the cache misses. */
let unique = 0;
const freshJwks = () => JSON.stringify({ keys: [rsa.jwk], n: unique++ });

describe("TokenError", () => {
  it("names itself, so logs show what kind of error it is", () => {
    const err = new TokenError("NO_KEYS", "x");
    expect(err.name).toBe("TokenError");
    expect(String(err)).toBe("TokenError: x");
  });
});

describe("parseJwks: which keys are usable", () => {
  it("skips entries that are not JWK objects and keeps the valid ones", () => {
    const ks = parseJwks({ keys: [null, 7, "RSA", [rsa.jwk], true, rsa.jwk] });
    expect(ks.keys).toHaveLength(1);
    expect(ks.keys[0]?.kid).toBe("r1");
  });

  it("uses a key without `use` or with use sig, and skips one meant for encryption", () => {
    expect(rsa.jwk.use).toBeUndefined();
    const ks = parseJwks({
      keys: [
        { ...rsa.jwk, kid: "plain" },
        { ...rsa.jwk, kid: "sig", use: "sig" },
        { ...rsa.jwk, kid: "enc", use: "enc" },
      ],
    });
    expect([...ks.byKid.keys()]).toEqual(["plain", "sig"]);
    expectTokenError(
      () => parseJwks({ keys: [{ ...rsa.jwk, use: "enc" }] }),
      "NO_KEYS",
      "JWKS contains no usable public keys",
    );
  });

  it("refuses RSA keys below 2048 bits", () => {
    const weak = pair("rsa", { kid: "weak" }, 1024).jwk;
    expect([...parseJwks({ keys: [weak, rsa.jwk] }).byKid.keys()]).toEqual(["r1"]);
    expectTokenError(() => parseJwks({ keys: [weak] }), "NO_KEYS", "JWKS contains no usable public keys");
  });

  it("skips well-typed members that are not a key (unknown curve, point off the curve, bad modulus)", () => {
    const bad: Jwk[] = [
      { ...ec.jwk, crv: "P-999" },
      { ...ec.jwk, y: ec.jwk.x }, // (x, x) is not on P-256
      { kty: "RSA", n: "", e: "AQAB" },
      { kty: "OKP", crv: "Ed25519", x: "AA" },
      { kty: "oct", k: "c2VjcmV0" } as Jwk,
      { ...rsa.jwk, n: 5 } as unknown as Jwk,
    ];
    expectTokenError(() => parseJwks({ keys: bad }), "NO_KEYS", "JWKS contains no usable public keys");
    expect(parseJwks({ keys: [...bad, ec.jwk] }).keys.map((k) => k.kid)).toEqual(["e1"]);
  });

  it("treats a non-string kid or alg as absent", () => {
    const [key] = parseJwks({ keys: [{ ...rsa.jwk, kid: 5, alg: 256 }] }).keys as [ParsedKey];
    expect(key.kid).toBeUndefined();
    expect(key.alg).toBeUndefined();
    expect(keyMatchesAlg(key, "RS256")).toBe(true);
  });

  it("indexes keys by kid: a key without kid is not indexed, keys sharing a kid are all kept", () => {
    const { kid: _, ...noKid } = ec.jwk;
    const ks = parseJwks({ keys: [rsa.jwk, noKid, { ...ec.jwk, kid: "r1" }] });
    expect(ks.keys).toHaveLength(3);
    expect([...ks.byKid.keys()]).toEqual(["r1"]);
    expect(ks.byKid.get("r1")?.map((k) => k.kty)).toEqual(["RSA", "EC"]);
  });

  it("names what is wrong with a document that is not a key set", () => {
    expectTokenError(() => parseJwks("{keys:"), "NO_KEYS", "JWKS is not valid JSON");
    for (const doc of ["null", "{}", '{"keys":{}}', "[]", '"keys"'])
      expectTokenError(() => parseJwks(doc), "NO_KEYS", 'JWKS has no "keys" array');
    expectTokenError(() => parseJwks('{"keys":[]}'), "NO_KEYS", "JWKS contains no usable public keys");
  });
});

describe("keyMatchesAlg", () => {
  it("lets a key without alg verify every algorithm of its family, and only those", () => {
    const { alg: _, ...noAlg } = rsa.jwk;
    const [key] = parseJwks({ keys: [noAlg] }).keys as [ParsedKey];
    for (const alg of ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"])
      expect(keyMatchesAlg(key, alg)).toBe(true);
    for (const alg of ["ES256", "EdDSA", "HS256", "none"]) expect(keyMatchesAlg(key, alg)).toBe(false);
  });

  it("accepts an Ed448 key for EdDSA but not for Ed25519", () => {
    const [key] = parseJwks({ keys: [pair("ed448").jwk] }).keys as [ParsedKey];
    expect(key.crv).toBe("Ed448");
    expect(keyMatchesAlg(key, "EdDSA")).toBe(true);
    expect(keyMatchesAlg(key, "Ed25519")).toBe(false);
  });
});

describe("key sets through the verifier", () => {
  it("verifies with a JWK that pins no alg, an Ed448 key, and keys that share a kid", async () => {
    const { alg: _, ...rsaNoAlg } = rsa.jwk;
    const ed448 = pair("ed448", { kid: "shared" });
    const ecShared = pair("ec", { kid: "shared" });
    const v = createJwtVerifier([
      {
        issuer: ISS,
        audience: AUD,
        algorithms: ["RS256", "ES256", "EdDSA"],
        jwks: { keys: [rsaNoAlg, ed448.jwk, ecShared.jwk] },
      },
    ]);
    await expect(v.verify(token(rsa.privateKey, "RS256", "r1"))).resolves.toMatchObject({ kid: "r1" });
    await expect(v.verify(token(ed448.privateKey, "EdDSA", "shared"))).resolves.toMatchObject({
      kid: "shared",
    });
    await expect(v.verify(token(ecShared.privateKey, "ES256", "shared"))).resolves.toMatchObject({
      kid: "shared",
    });
  });
});

describe("parseJwksCached and the static and config-store sources", () => {
  it("returns the same imported set for the same text", () => {
    const json = freshJwks();
    const first = parseJwksCached(json);
    expect(parseJwksCached(json)).toBe(first);
    expect(parseJwksCached(`${json} `)).not.toBe(first);
  });

  it("keeps the 32 most recently used texts and evicts the least recently used", () => {
    const a = freshJwks();
    const b = freshJwks();
    const setA = parseJwksCached(a);
    const setB = parseJwksCached(b);
    for (let i = 0; i < 30; i++) parseJwksCached(freshJwks());
    // a, b and 30 others: exactly full, nothing evicted yet; using a makes b the oldest
    expect(parseJwksCached(a)).toBe(setA);
    parseJwksCached(freshJwks());
    expect(parseJwksCached(a)).toBe(setA);
    expect(parseJwksCached(b)).not.toBe(setB);
  });

  it("shares a static JWKS string's import, but parses an object every time", () => {
    const json = freshJwks();
    expect(new StaticJwksSource(json).get()).toBe(new StaticJwksSource(json).get());
    // A config object changed in place must not be answered from a cache keyed by its identity.
    const doc: { keys: unknown[] } = { keys: [rsa.jwk] };
    expect(new StaticJwksSource(doc).get().keys.map((k) => k.kid)).toEqual(["r1"]);
    doc.keys = [ec.jwk];
    expect(new StaticJwksSource(doc).get().keys.map((k) => k.kid)).toEqual(["e1"]);
  });

  it("says no JWKS is configured when the store has none or an empty one", () => {
    let value: string | undefined;
    const source = new DynamicJwksSource(() => value);
    expectTokenError(() => source.get(), "NO_KEYS", "No JWKS configured");
    value = "";
    expectTokenError(() => source.get(), "NO_KEYS", "No JWKS configured");
  });

  it("keeps its own import of an unchanged value after the shared cache evicted it", () => {
    const value = freshJwks();
    const source = new DynamicJwksSource(() => value);
    const first = source.get();
    for (let i = 0; i < 40; i++) parseJwksCached(freshJwks());
    expect(source.get()).toBe(first);
  });
});

describe("RemoteJwksSource against a local JWKS endpoint", () => {
  let server: Server;
  let url = "";
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  let hits = 0;
  const requests: IncomingMessage[] = [];
  const held: ServerResponse[] = [];

  let status = 200;
  let body = "";
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(req);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
  });
  afterEach(() => {
    for (const res of held.splice(0)) res.destroy();
    handler = serve;
    hits = 0;
    status = 200;
    body = JSON.stringify({ keys: [rsa.jwk] });
    requests.length = 0;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  handler = serve;
  body = JSON.stringify({ keys: [rsa.jwk] });

  // Far from zero, so a sum of two instants can never pass for their difference.
  const T0 = 1_000_000_000;

  it("asks for JSON and counts its requests", async () => {
    const source = new RemoteJwksSource(url);
    expect(source.fetchCount).toBe(0);
    await source.get();
    expect(source.fetchCount).toBe(1);
    expect(hits).toBe(1);
    expect(requests[0]?.headers.accept).toBe("application/json");
  });

  it("serves the cached set until exactly maxAgeMs, then refetches", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, { now: () => now, maxAgeMs: 1_000 });
    const first = await source.get();
    now = T0 + 999;
    expect(await source.get()).toBe(first);
    expect(hits).toBe(1);
    now = T0 + 1_000;
    expect(await source.get()).not.toBe(first);
    expect(hits).toBe(2);
  });

  it("while the endpoint fails, serves stale keys and retries exactly once the interval has passed", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, {
      now: () => now,
      maxAgeMs: 1_000,
      minRefetchIntervalMs: 5_000,
    });
    const first = await source.get();
    status = 503;
    now = T0 + 1_000; // stale: one attempt, which fails
    expect(await source.get()).toBe(first);
    expect(hits).toBe(2);
    now = T0 + 1_000 + 4_999;
    expect(await source.get()).toBe(first);
    expect(hits).toBe(2);
    now = T0 + 1_000 + 5_000;
    expect(await source.get()).toBe(first);
    expect(hits).toBe(3);
  });

  it("refetches on refresh() at most once per interval, measured from the last attempt", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, { now: () => now, minRefetchIntervalMs: 5_000 });
    const first = await source.get();
    now = T0 + 4_999;
    expect(await source.refresh()).toBe(first);
    expect(hits).toBe(1);
    now = T0 + 5_000;
    const second = await source.refresh();
    expect(hits).toBe(2);
    expect(second).not.toBe(first);
    expect(await source.get()).toBe(second);
  });

  it("with awaitRefetch, refresh() within the interval waits for the next fetch, one for every caller waiting", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, {
      now: () => now,
      minRefetchIntervalMs: 200,
      awaitRefetch: true,
    });
    await source.get();
    // The issuer rotates to e1 and signs with it at once; the next fetch is allowed 100 ms on.
    body = JSON.stringify({ keys: [rsa.jwk, ec.jwk] });
    now = T0 + 100;
    const waiting = [source.refresh(), source.refresh(), source.refresh()];
    expect(hits).toBe(1);
    const sets = await Promise.all(waiting);
    expect(hits).toBe(2);
    for (const set of sets) expect(set?.byKid.has("e1")).toBe(true);
    expect(sets[1]).toBe(sets[0]);
    expect(sets[2]).toBe(sets[0]);
  });

  it("refresh() keeps the old set when the refetch fails", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, { now: () => now, minRefetchIntervalMs: 5_000 });
    const first = await source.get();
    status = 503;
    now = T0 + 5_000;
    expect(await source.refresh()).toBe(first);
    expect(hits).toBe(2);
    expect(await source.get()).toBe(first);
  });

  it("refresh() during a fetch waits for that fetch instead of starting another", async () => {
    const source = new RemoteJwksSource(url, { now: () => T0, minRefetchIntervalMs: 5_000 });
    const loading = source.get();
    const refreshed = await source.refresh();
    expect(refreshed).toBeDefined();
    expect(refreshed).toBe(await loading);
    expect(hits).toBe(1);
  });

  it("refresh() during a failing refetch returns the old set", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, {
      now: () => now,
      maxAgeMs: 1_000,
      minRefetchIntervalMs: 5_000,
    });
    const first = await source.get();
    status = 503;
    now = T0 + 1_000;
    const stale = source.get(); // starts the refetch
    expect(await source.refresh()).toBe(first);
    expect(await stale).toBe(first);
    expect(hits).toBe(2);
  });

  it("a failed first load names the status; retries wait exactly one interval", async () => {
    let now = T0;
    const source = new RemoteJwksSource(url, { now: () => now, minRefetchIntervalMs: 5_000 });
    status = 503;
    await expectRejects(Promise.resolve(source.get()), "NO_KEYS", "JWKS endpoint returned HTTP 503");
    now = T0 + 4_999;
    await expectRejects(Promise.resolve(source.get()), "NO_KEYS", "JWKS endpoint unavailable");
    expect(hits).toBe(1);
    status = 200;
    now = T0 + 5_000;
    await expect(Promise.resolve(source.get())).resolves.toMatchObject({ keys: [{ kid: "r1" }] });
    expect(hits).toBe(2);
  });

  it("an empty answer (204, no body) is not a key set", async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    const source = new RemoteJwksSource(url);
    await expectRejects(Promise.resolve(source.get()), "NO_KEYS", "JWKS is not valid JSON");
  });

  it("a connection the endpoint drops is NO_KEYS, with no network detail", async () => {
    handler = (req) => req.socket.destroy();
    const source = new RemoteJwksSource(url);
    await expectRejects(Promise.resolve(source.get()), "NO_KEYS", "JWKS endpoint unavailable");
  });

  it("an endpoint that never answers times out as NO_KEYS", async () => {
    handler = (_req, res) => {
      held.push(res);
    };
    const source = new RemoteJwksSource(url, { timeoutMs: 100 });
    await expectRejects(Promise.resolve(source.get()), "NO_KEYS", "JWKS endpoint unavailable");
    expect(held).toHaveLength(1);
  });

  it(`accepts a document of exactly ${MAX_JWKS_BYTES} bytes and refuses a longer one`, async () => {
    const doc = JSON.stringify({ keys: [rsa.jwk] });
    body = doc.padEnd(MAX_JWKS_BYTES, " ");
    await expect(Promise.resolve(new RemoteJwksSource(url).get())).resolves.toMatchObject({
      keys: [{ kid: "r1" }],
    });
    body = doc.padEnd(MAX_JWKS_BYTES + 1, " ");
    await expectRejects(
      Promise.resolve(new RemoteJwksSource(url).get()),
      "NO_KEYS",
      "JWKS response too large",
    );
    body = "\u00e9".repeat(MAX_JWKS_BYTES / 2 + 1); // half as many characters as bytes (UTF-8)
    await expectRejects(
      Promise.resolve(new RemoteJwksSource(url).get()),
      "NO_KEYS",
      "JWKS response too large",
    );
  });

  it("refuses an endless document once it passes the limit, without waiting for its end", async () => {
    handler = (_req, res) => {
      held.push(res);
      res.writeHead(200, { "content-type": "application/json" });
      res.write(`{"keys":[${" ".repeat(MAX_JWKS_BYTES)}`); // and never ends
    };
    // No timeout could end this test: only the size limit can.
    const source = new RemoteJwksSource(url, { timeoutMs: 3_600_000 });
    await expectRejects(Promise.resolve(source.get()), "NO_KEYS", "JWKS response too large");
  });
});
