import { sign as cryptoSign, KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  createJwtVerifier,
  type JwtProviderConfig,
  TokenError,
  type TokenErrorCode,
} from "../../src/backend/auth/jwt-verifier.ts";
import { beyondLeeway, CLOCK_LEEWAY_SECONDS, tokenExpired } from "../../src/backend/auth/token-clock.ts";

afterEach(() => {
  vi.useRealTimers();
});

const ISS = "https://idp.example.test";
const AUD = "service-api";

type Key = CryptoKey;
interface Pair {
  privateKey: Key;
  publicKey: Key;
  jwk: JWK;
}

async function makePair(alg: string, kid: string): Promise<Pair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  jwk.kid = kid;
  jwk.alg = alg;
  jwk.use = "sig";
  return { privateKey, publicKey, jwk };
}

interface SignOpts {
  alg?: string;
  kid?: string | null;
  iss?: string;
  aud?: string | string[];
  exp?: number | null;
  nbf?: number;
  claims?: Record<string, unknown>;
}

const now = () => Math.floor(Date.now() / 1000);

function sign(key: Key, o: SignOpts = {}): Promise<string> {
  const alg = o.alg ?? "RS256";
  const header: { alg: string; kid?: string } = { alg };
  if (o.kid !== null) header.kid = o.kid ?? "k1";
  const jwt = new SignJWT({ sub: "user-1", ...o.claims })
    .setProtectedHeader(header)
    .setIssuer(o.iss ?? ISS)
    .setAudience(o.aud ?? AUD)
    .setIssuedAt();
  if (o.exp !== null) jwt.setExpirationTime(o.exp ?? now() + 3600);
  if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
  return jwt.sign(key);
}

const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");

/** Build an arbitrary (unsigned or HMAC-signed) token by hand. */
async function rawToken(header: object, payload: object, hmacSecret?: string | Buffer): Promise<string> {
  const input = `${b64(header)}.${b64(payload)}`;
  if (hmacSecret === undefined) return `${input}.`;
  const { createHmac } = await import("node:crypto");
  return `${input}.${createHmac("sha256", hmacSecret).update(input).digest("base64url")}`;
}

async function expectCode(p: Promise<unknown>, code: TokenErrorCode, message?: string): Promise<TokenError> {
  const err = await p.then(
    () => {
      throw new Error(`expected TokenError ${code}, but verification succeeded`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TokenError);
  expect((err as TokenError).code).toBe(code);
  if (message !== undefined) expect((err as TokenError).message).toBe(message);
  return err as TokenError;
}

const validPayload = () => ({ iss: ISS, aud: AUD, sub: "u", exp: now() + 3600, iat: now() });

let rsa: Pair;
let rsa2: Pair;
let ec: Pair;
let ed: Pair;
let staticCfg: JwtProviderConfig;

beforeAll(async () => {
  [rsa, rsa2, ec, ed] = await Promise.all([
    makePair("RS256", "k1"),
    makePair("RS256", "k2"),
    makePair("ES256", "ec1"),
    makePair("EdDSA", "ed1"),
  ]);
  staticCfg = { issuer: ISS, audience: AUD, jwks: { keys: [rsa.jwk as JsonWebKey] } };
});

describe("createJwtVerifier: static JWKS", () => {
  it("accepts a valid RS256 token and returns payload, issuer and kid", async () => {
    const v = createJwtVerifier([staticCfg]);
    const res = await v.verify(await sign(rsa.privateKey, { claims: { role: "admin" } }));
    expect(res.providerIssuer).toBe(ISS);
    expect(res.kid).toBe("k1");
    expect(res.payload.sub).toBe("user-1");
    expect(res.payload.role).toBe("admin");
    expect(typeof res.payload.exp).toBe("number");
  });

  it("accepts the JWKS as a JSON string, audience lists, and tokens without kid", async () => {
    const v = createJwtVerifier([
      { issuer: ISS, audience: ["other", AUD], jwks: JSON.stringify({ keys: [rsa.jwk] }) },
    ]);
    await expect(v.verify(await sign(rsa.privateKey, { kid: null, aud: ["x", AUD] }))).resolves.toMatchObject(
      {
        providerIssuer: ISS,
      },
    );
  });

  it("supports ES256 and EdDSA when pinned", async () => {
    const v = createJwtVerifier([
      {
        issuer: ISS,
        audience: AUD,
        algorithms: ["ES256", "EdDSA"],
        jwks: { keys: [ec.jwk, ed.jwk] as JsonWebKey[] },
      },
    ]);
    await expect(v.verify(await sign(ec.privateKey, { alg: "ES256", kid: "ec1" }))).resolves.toBeTruthy();
    await expect(v.verify(await sign(ed.privateKey, { alg: "EdDSA", kid: "ed1" }))).resolves.toBeTruthy();
  });

  it("selects the provider by iss", async () => {
    const v = createJwtVerifier([
      { issuer: "https://a.test", audience: AUD, jwks: { keys: [rsa2.jwk as JsonWebKey] } },
      staticCfg,
    ]);
    expect((await v.verify(await sign(rsa.privateKey))).providerIssuer).toBe(ISS);
    expect(
      (await v.verify(await sign(rsa2.privateKey, { kid: "k2", iss: "https://a.test" }))).providerIssuer,
    ).toBe("https://a.test");
    // right key, but claims to be from the other provider whose keys did not sign it
    await expectCode(v.verify(await sign(rsa.privateKey, { iss: "https://a.test" })), "UNKNOWN_KEY");
  });

  it.each(["none", "None", "NONE", "nOnE"])("rejects alg %s", async (alg) => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await rawToken({ alg, kid: "k1" }, validPayload())), "ALG_NOT_ALLOWED");
  });

  it("rejects HS256 signed with the RSA public key (algorithm confusion)", async () => {
    const v = createJwtVerifier([staticCfg]);
    const pem = await exportSPKI(rsa.publicKey);
    await expectCode(
      v.verify(await rawToken({ alg: "HS256", kid: "k1" }, validPayload(), pem)),
      "ALG_NOT_ALLOWED",
    );
    // also with the JWK's modulus bytes or the raw JSON as the secret
    await expectCode(
      v.verify(await rawToken({ alg: "HS256", kid: "k1" }, validPayload(), JSON.stringify(rsa.jwk))),
      "ALG_NOT_ALLOWED",
    );
  });

  it("refuses to configure HMAC algorithms at all", () => {
    expect(() => createJwtVerifier([{ ...staticCfg, algorithms: ["HS256"] }])).toThrow(
      /unsupported algorithm/,
    );
  });

  it("rejects an algorithm not pinned for the provider (ES256 token for RS256 provider)", async () => {
    const v = createJwtVerifier([{ ...staticCfg, jwks: { keys: [rsa.jwk, ec.jwk] as JsonWebKey[] } }]);
    await expectCode(v.verify(await sign(ec.privateKey, { alg: "ES256", kid: "ec1" })), "ALG_NOT_ALLOWED");
  });

  it("rejects an unknown kid", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await sign(rsa.privateKey, { kid: "nope" })), "UNKNOWN_KEY");
  });

  it("rejects a key whose type does not match alg even if kid matches", async () => {
    const v = createJwtVerifier([
      {
        ...staticCfg,
        algorithms: ["RS256", "ES256"],
        jwks: { keys: [{ ...ec.jwk, kid: "k1", alg: undefined }] as unknown as JsonWebKey[] },
      },
    ]);
    await expectCode(v.verify(await sign(rsa.privateKey)), "UNKNOWN_KEY");
  });

  it("rejects a tampered payload", async () => {
    const v = createJwtVerifier([staticCfg]);
    const [h, , s] = (await sign(rsa.privateKey)).split(".");
    const forged = `${h}.${b64({ ...validPayload(), sub: "admin" })}.${s}`;
    await expectCode(v.verify(forged), "INVALID_SIGNATURE", "Invalid token signature");
  });

  it('rejects a tampered signature with "Invalid token signature"', async () => {
    const v = createJwtVerifier([staticCfg]);
    const [h, p, s] = (await sign(rsa.privateKey)).split(".");
    const sig = Buffer.from(s as string, "base64url");
    sig[10] = (sig[10] as number) ^ 0x01;
    await expectCode(
      v.verify(`${h}.${p}.${sig.toString("base64url")}`),
      "INVALID_SIGNATURE",
      "Invalid token signature",
    );
    // truncated signature too
    await expectCode(
      v.verify(`${h}.${p}.${(s as string).slice(0, 40)}`),
      "INVALID_SIGNATURE",
      "Invalid token signature",
    );
  });

  it("rejects a token signed by a different key with the same kid", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(
      v.verify(await sign(rsa2.privateKey, { kid: "k1" })),
      "INVALID_SIGNATURE",
      "Invalid token signature",
    );
  });

  it("rejects a tampered ES256 signature", async () => {
    const v = createJwtVerifier([
      { ...staticCfg, algorithms: ["ES256"], jwks: { keys: [ec.jwk] as JsonWebKey[] } },
    ]);
    const [h, p] = (await sign(ec.privateKey, { alg: "ES256", kid: "ec1" })).split(".");
    await expectCode(
      v.verify(`${h}.${p}.${b64("x".repeat(64))}`),
      "INVALID_SIGNATURE",
      "Invalid token signature",
    );
  });

  it.each([
    ["empty", ""],
    ["one part", "abc"],
    ["two parts", "abc.def"],
    ["four parts", "a.b.c.d"],
    ["garbage", "!!!.@@@.###"],
    ["non-JSON header", `${b64("not json")}.${b64({})}.abc`],
    ["array header", `${b64([1])}.${b64({})}.abc`],
    ["empty signature", `${b64({ alg: "RS256" })}.${b64({})}.`],
    ["bad base64 length", `${b64({ alg: "RS256" })}.${b64({})}.a`],
    ["whitespace", ` ${b64({ alg: "RS256" })}.${b64({})}.abcd`],
  ])("rejects malformed input: %s", async (_name, token) => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(token), "TOKEN_MALFORMED");
  });

  it("rejects non-string input", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(undefined as unknown as string), "TOKEN_MALFORMED");
  });

  it("rejects non-JSON payload in an otherwise well-formed token", async () => {
    const v = createJwtVerifier([staticCfg]);
    const [h, , s] = (await sign(rsa.privateKey)).split(".");
    await expectCode(v.verify(`${h}.${b64("{oops")}.${s}`), "TOKEN_MALFORMED");
  });

  it("rejects oversize tokens before parsing", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify("a".repeat(8193)), "TOKEN_TOO_LARGE");
    // a valid token padded with claims beyond the limit
    const big = await sign(rsa.privateKey, { claims: { pad: "x".repeat(9000) } });
    await expectCode(v.verify(big), "TOKEN_TOO_LARGE");
    const small = createJwtVerifier([staticCfg], { maxTokenBytes: 100 });
    await expectCode(small.verify(await sign(rsa.privateKey)), "TOKEN_TOO_LARGE");
  });

  it("rejects critical header extensions", async () => {
    const v = createJwtVerifier([staticCfg]);
    const t = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1", crit: ["x-ext"], "x-ext": 1 })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("1h")
      .sign(rsa.privateKey, { crit: { "x-ext": true } });
    await expectCode(v.verify(t), "TOKEN_MALFORMED");
  });

  it("rejects expired tokens beyond the tolerance, accepts within it", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await sign(rsa.privateKey, { exp: now() - 60 })), "TOKEN_EXPIRED");
    await expect(v.verify(await sign(rsa.privateKey, { exp: now() - 2 }))).resolves.toBeTruthy();
  });

  it("rejects tokens without exp", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await sign(rsa.privateKey, { exp: null })), "CLAIM_INVALID");
  });

  it("rejects nbf in the future beyond tolerance", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await sign(rsa.privateKey, { nbf: now() + 120 })), "CLAIM_INVALID");
    await expect(v.verify(await sign(rsa.privateKey, { nbf: now() + 2 }))).resolves.toBeTruthy();
  });

  it("rejects a wrong or missing issuer", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await sign(rsa.privateKey, { iss: "https://evil.test" })), "CLAIM_INVALID");
    const noIss = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setAudience(AUD)
      .setExpirationTime("1h")
      .sign(rsa.privateKey);
    await expectCode(v.verify(noIss), "CLAIM_INVALID");
  });

  it("rejects a wrong or missing audience", async () => {
    const v = createJwtVerifier([staticCfg]);
    await expectCode(v.verify(await sign(rsa.privateKey, { aud: "other" })), "CLAIM_INVALID");
    await expectCode(v.verify(await sign(rsa.privateKey, { aud: ["a", "b"] })), "CLAIM_INVALID");
    const noAud = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(ISS)
      .setExpirationTime("1h")
      .sign(rsa.privateKey);
    await expectCode(v.verify(noAud), "CLAIM_INVALID");
  });

  it("ignores symmetric and private-key material in the JWKS", async () => {
    const v = createJwtVerifier([
      { ...staticCfg, jwks: { keys: [{ kty: "oct", k: "c2VjcmV0", kid: "k1" }, rsa.jwk] as JsonWebKey[] } },
    ]);
    await expect(v.verify(await sign(rsa.privateKey))).resolves.toBeTruthy();
    expect(() =>
      createJwtVerifier([{ ...staticCfg, jwks: { keys: [{ kty: "oct", k: "c2VjcmV0" }] as JsonWebKey[] } }]),
    ).toThrow(TokenError);
  });

  it("validates provider configuration eagerly", () => {
    expect(() => createJwtVerifier([{ issuer: ISS, audience: AUD }])).toThrow(/exactly one/);
    expect(() => createJwtVerifier([{ ...staticCfg, jwks: "not json" }])).toThrow(TokenError);
    expect(() => createJwtVerifier([staticCfg, staticCfg])).toThrow(/duplicate/);
  });

  it("does not echo token content in error messages", async () => {
    const v = createJwtVerifier([staticCfg]);
    const secretish = "SECRET-MARKER-123";
    const t = await sign(rsa.privateKey, { iss: secretish });
    const err = await expectCode(v.verify(t), "CLAIM_INVALID");
    expect(err.message).not.toContain(secretish);
  });
});

/** RS256 over exactly these header and payload segments (any spelling), with a real key. */
function signSegments(key: Key, header: string, payload: string): string {
  const signature = cryptoSign("sha256", Buffer.from(`${header}.${payload}`), KeyObject.from(key));
  return `${header}.${payload}.${signature.toString("base64url")}`;
}

const B64URL_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * The same bytes spelled with non-zero unused bits in the last character (segment length must be
 * 2 or 3 mod 4); Buffer decodes both spellings to the same bytes.
 */
function withDirtyLastChar(seg: string): string {
  const spare = seg.length % 4 === 2 ? 0x0f : 0x03;
  const last = B64URL_CHARS.indexOf(seg[seg.length - 1] as string);
  const dirty = `${seg.slice(0, -1)}${B64URL_CHARS[last | (spare & 0x01)]}`;
  expect(dirty).not.toBe(seg);
  expect(Buffer.from(dirty, "base64url").equals(Buffer.from(seg, "base64url"))).toBe(true);
  return dirty;
}

describe("createJwtVerifier: token hygiene", () => {
  it("refuses a validly signed token issued ten years in the future", async () => {
    const v = createJwtVerifier([staticCfg]);
    const future = now() + 10 * 365 * 24 * 3600;
    const token = await new SignJWT({ sub: "u" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(ISS)
      .setAudience(AUD)
      .setIssuedAt(future)
      .setExpirationTime(future + 3600)
      .sign(rsa.privateKey);
    await expectCode(v.verify(token), "CLAIM_INVALID", "Token issued in the future");
  });

  it("accepts iat a little ahead (within the leeway) and refuses it beyond", async () => {
    const v = createJwtVerifier([staticCfg]);
    const withIat = (iat: number) =>
      signSegments(rsa.privateKey, b64({ alg: "RS256", kid: "k1" }), b64({ ...validPayload(), iat }));
    await expect(v.verify(withIat(now() + 1))).resolves.toBeTruthy();
    await expectCode(v.verify(withIat(now() + CLOCK_LEEWAY_SECONDS + 60)), "CLAIM_INVALID");
  });

  it("refuses a non-numeric iat", async () => {
    const v = createJwtVerifier([staticCfg]);
    const token = signSegments(
      rsa.privateKey,
      b64({ alg: "RS256", kid: "k1" }),
      b64({ ...validPayload(), iat: "yesterday" }),
    );
    await expectCode(v.verify(token), "CLAIM_INVALID", 'Invalid "iat" claim');
  });

  it("refuses a signature whose last character has non-zero unused bits", async () => {
    const v = createJwtVerifier([staticCfg]);
    const token = await sign(rsa.privateKey);
    await expect(v.verify(token)).resolves.toBeTruthy();
    const [h, p, s] = token.split(".") as [string, string, string];
    // A 2048-bit RSA signature is 256 bytes: 342 characters, 4 unused bits at the end.
    expect(s.length % 4).toBe(2);
    await expectCode(v.verify(`${h}.${p}.${withDirtyLastChar(s)}`), "TOKEN_MALFORMED");
  });

  it("refuses padding and the standard base64 alphabet in the signature", async () => {
    const v = createJwtVerifier([staticCfg]);
    const [h, p, s] = (await sign(rsa.privateKey)).split(".") as [string, string, string];
    const standard = Buffer.from(s, "base64url").toString("base64"); // `+`, `/` and `=` padding
    expect(standard).toMatch(/=$/);
    await expectCode(v.verify(`${h}.${p}.${standard}`), "TOKEN_MALFORMED");
    await expectCode(v.verify(`${h}.${p}.${standard.replace(/=+$/, "")}`), "TOKEN_MALFORMED");
    await expectCode(v.verify(`${h}.${p}.${s}==`), "TOKEN_MALFORMED");
  });

  it("refuses non-canonical header and payload segments even when validly signed over them", async () => {
    const v = createJwtVerifier([staticCfg]);
    // Pad the JSON so each segment's length is 2 or 3 mod 4 (it has spare bits to dirty).
    const pad = (seg: (extra: string) => string) => {
      for (let extra = ""; ; extra += " ") if (seg(extra).length % 4 >= 2) return seg(extra);
    };
    const header = pad((x) => b64(`{"alg":"RS256","kid":"k1"${x}}`));
    const payload = pad((x) => b64(`${JSON.stringify(validPayload()).slice(0, -1)}${x}}`));
    await expect(v.verify(signSegments(rsa.privateKey, header, payload))).resolves.toBeTruthy();
    await expectCode(
      v.verify(signSegments(rsa.privateKey, withDirtyLastChar(header), payload)),
      "TOKEN_MALFORMED",
      "Malformed token header",
    );
    await expectCode(
      v.verify(signSegments(rsa.privateKey, header, withDirtyLastChar(payload))),
      "TOKEN_MALFORMED",
      "Malformed token payload",
    );
    await expectCode(
      v.verify(signSegments(rsa.privateKey, `${header}=`, payload)),
      "TOKEN_MALFORMED",
      "Malformed token header",
    );
  });
});

describe("token clock (shared by HTTP, WebSocket authenticate and the WebSocket sweep)", () => {
  it("a token expires exactly at exp + leeway", () => {
    const exp = 1_700_000_000;
    const deadline = (exp + CLOCK_LEEWAY_SECONDS) * 1000;
    expect(tokenExpired(exp, exp * 1000)).toBe(false);
    expect(tokenExpired(exp, deadline - 1)).toBe(false);
    expect(tokenExpired(exp, deadline)).toBe(true);
  });

  it("a time claim is in the future only beyond the leeway", () => {
    const nowMs = 1_700_000_000_000;
    expect(beyondLeeway(nowMs / 1000 + CLOCK_LEEWAY_SECONDS, nowMs)).toBe(false);
    expect(beyondLeeway(nowMs / 1000 + CLOCK_LEEWAY_SECONDS + 1, nowMs)).toBe(true);
  });
});

describe("createJwtVerifier: getJwks (config store)", () => {
  it("follows rotation: new keys accepted, tokens of removed keys rejected", async () => {
    let current: string | undefined = JSON.stringify({ keys: [rsa.jwk] });
    let calls = 0;
    const v = createJwtVerifier([
      {
        issuer: ISS,
        audience: AUD,
        getJwks: () => {
          calls++;
          return current;
        },
      },
    ]);
    const oldTok = await sign(rsa.privateKey);
    const newTok = await sign(rsa2.privateKey, { kid: "k2" });
    await expect(v.verify(oldTok)).resolves.toBeTruthy();
    await expectCode(v.verify(newTok), "UNKNOWN_KEY");

    current = JSON.stringify({ keys: [rsa2.jwk] });
    await expect(v.verify(newTok)).resolves.toBeTruthy();
    await expectCode(v.verify(oldTok), "UNKNOWN_KEY");

    // same kid reused for a different key: old signature no longer verifies
    current = JSON.stringify({ keys: [{ ...rsa2.jwk, kid: "k1" }] });
    await expectCode(v.verify(oldTok), "INVALID_SIGNATURE", "Invalid token signature");

    current = undefined;
    await expectCode(v.verify(newTok), "NO_KEYS");
    current = "{broken";
    await expectCode(v.verify(newTok), "NO_KEYS");
    expect(calls).toBeGreaterThanOrEqual(7);
  });
});

describe("createJwtVerifier: remote JWKS", () => {
  let server: Server;
  let url: string;
  let served: JWK[] = [];
  let hits = 0;
  let status = 200;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ keys: served }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const reset = (keys: JWK[]) => {
    served = keys;
    hits = 0;
    status = 200;
  };

  it("fetches once (lazily, deduplicating concurrent requests) and caches", async () => {
    reset([rsa.jwk]);
    const v = createJwtVerifier([{ issuer: ISS, audience: AUD, jwksUrl: url }]);
    expect(hits).toBe(0);
    const tok = await sign(rsa.privateKey);
    await Promise.all(Array.from({ length: 10 }, () => v.verify(tok)));
    for (let i = 0; i < 20; i++) await v.verify(tok);
    expect(hits).toBe(1);
  });

  it("refetches on unknown kid (key rotation), rate-limited", async () => {
    // The refetch interval is measured on Date.now: frozen here, and moved on by hand, so a slow
    // machine cannot stretch "within the interval" past it.
    vi.useFakeTimers({ toFake: ["Date"] });
    reset([rsa.jwk]);
    const v = createJwtVerifier([{ issuer: ISS, audience: AUD, jwksUrl: url, minRefetchIntervalMs: 300 }]);
    await v.verify(await sign(rsa.privateKey));
    expect(hits).toBe(1);

    // IdP rotates to k2. Within the interval the unknown kid does not cause a fetch.
    served = [rsa.jwk, rsa2.jwk];
    const rotated = await sign(rsa2.privateKey, { kid: "k2" });
    await expectCode(v.verify(rotated), "UNKNOWN_KEY");
    expect(hits).toBe(1);

    vi.setSystemTime(Date.now() + 350);
    await expect(v.verify(rotated)).resolves.toMatchObject({ kid: "k2" });
    expect(hits).toBe(2);

    // A flood of garbage kids triggers at most one refetch per interval.
    vi.setSystemTime(Date.now() + 350);
    const bogus = await Promise.all(["x1", "x2", "x3"].map((kid) => sign(rsa.privateKey, { kid })));
    for (let i = 0; i < 5; i++) {
      for (const t of bogus) await expectCode(v.verify(t), "UNKNOWN_KEY");
    }
    expect(hits).toBe(3);
    // known keys keep working without fetching
    await v.verify(rotated);
    await v.verify(await sign(rsa.privateKey));
    expect(hits).toBe(3);
  });

  it("uses the injected fetch and reports NO_KEYS when the endpoint fails", async () => {
    reset([rsa.jwk]);
    status = 500;
    let calls = 0;
    const v = createJwtVerifier([{ issuer: ISS, audience: AUD, jwksUrl: url }], {
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    await expectCode(v.verify(await sign(rsa.privateKey)), "NO_KEYS");
    expect(calls).toBe(1);
    // failed initial loads are rate-limited too
    await expectCode(v.verify(await sign(rsa.privateKey)), "NO_KEYS");
    expect(calls).toBe(1);
  });

  it("keeps old keys if a refetch fails", async () => {
    reset([rsa.jwk]);
    const v = createJwtVerifier([{ issuer: ISS, audience: AUD, jwksUrl: url, minRefetchIntervalMs: 0 }]);
    const tok = await sign(rsa.privateKey);
    await v.verify(tok);
    status = 503;
    await expectCode(v.verify(await sign(rsa.privateKey, { kid: "zz" })), "UNKNOWN_KEY");
    await expect(v.verify(tok)).resolves.toBeTruthy();
  });
});

describe("performance", () => {
  it("verifies RS256 tokens from static keys quickly", async () => {
    const v = createJwtVerifier([staticCfg]);
    const tok = await sign(rsa.privateKey);
    for (let i = 0; i < 500; i++) await v.verify(tok);
    const n = 3000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await v.verify(tok);
    const us = Number(process.hrtime.bigint() - t0) / n / 1000;
    console.info(`RS256 verify: ${us.toFixed(1)} µs/token`);
    // generous bound so slow CI machines do not flake; typical is ~20 µs
    expect(us).toBeLessThan(500);
  });
});
