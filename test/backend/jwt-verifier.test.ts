import { constants as cryptoConstants, sign as cryptoSign, KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
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

  it("verifyNow: the same result without a promise, and a refusal thrown at once, with static keys", async () => {
    const v = createJwtVerifier([staticCfg]);
    const tok = await sign(rsa.privateKey);
    const now = v.verifyNow(tok);
    expect(now).not.toBeInstanceOf(Promise);
    expect(now).toEqual(await v.verify(tok));
    const forged = `${tok.slice(0, tok.lastIndexOf("."))}.${(await sign(rsa2.privateKey)).split(".")[2]}`;
    expect(() => v.verifyNow(forged)).toThrow(TokenError);
    await expectCode(v.verify(forged), "INVALID_SIGNATURE");
    // `verify` rejects rather than throws, whatever the refusal.
    const refused = v.verify("not a token");
    expect(refused).toBeInstanceOf(Promise);
    await expectCode(refused, "TOKEN_MALFORMED");
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

  it("uses a key only for the algorithm and curve it declares", async () => {
    // An RS384 key under the token's kid does not verify RS256, though the RSA maths would.
    const rs384Only = createJwtVerifier([
      {
        ...staticCfg,
        algorithms: ["RS256", "RS384"],
        jwks: { keys: [{ ...rsa.jwk, alg: "RS384" }] as JsonWebKey[] },
      },
    ]);
    await expectCode(rs384Only.verify(await sign(rsa.privateKey)), "UNKNOWN_KEY");
    // A P-384 key is no ES256 key, with or without an `alg` of its own.
    const p384 = await makePair("ES384", "ec1");
    const wrongCurve = createJwtVerifier([
      {
        ...staticCfg,
        algorithms: ["ES256"],
        jwks: { keys: [{ ...p384.jwk, alg: undefined }] as JsonWebKey[] },
      },
    ]);
    await expectCode(
      wrongCurve.verify(await sign(ec.privateKey, { alg: "ES256", kid: "ec1" })),
      "UNKNOWN_KEY",
    );
  });

  it("ignores keys whose key_ops do not include verify", async () => {
    const withOps = (ops: unknown) =>
      createJwtVerifier([{ ...staticCfg, jwks: { keys: [{ ...rsa.jwk, key_ops: ops }] as JsonWebKey[] } }]);
    await expect(withOps(["verify"]).verify(await sign(rsa.privateKey))).resolves.toBeTruthy();
    for (const ops of [["encrypt"], [], "verify"]) expect(() => withOps(ops)).toThrow(TokenError);
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

  it("verifyNow answers with a promise while the keys are fetched, synchronously once they are cached", async () => {
    reset([rsa.jwk]);
    const v = createJwtVerifier([{ issuer: ISS, audience: AUD, jwksUrl: url }]);
    const tok = await sign(rsa.privateKey);
    const first = v.verifyNow(tok);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).payload.sub).toBe("user-1");
    const second = v.verifyNow(tok);
    expect(second).not.toBeInstanceOf(Promise);
    expect((second as { payload: { sub?: string } }).payload.sub).toBe("user-1");
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

  it("never refetches for a kid it knows, even without a rate limit", async () => {
    reset([rsa.jwk]);
    const v = createJwtVerifier([{ issuer: ISS, audience: AUD, jwksUrl: url, minRefetchIntervalMs: 0 }]);
    const tok = await sign(rsa.privateKey);
    for (let i = 0; i < 3; i++) await v.verify(tok);
    expect(hits).toBe(1);
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

/** A token RS256-signed by `rsa` over exactly this header and payload (objects, or raw JSON text). */
function rs256Token(header: object | string, payload: object | string): string {
  return signSegments(rsa.privateKey, b64(header), b64(payload));
}

const RS256_HEADER = { alg: "RS256", kid: "k1" };

/** A payload as JSON text, so it can carry numbers JSON.stringify cannot write (1e400 parses to Infinity). */
const rawPayload = (extra: string) => `${JSON.stringify(validPayload()).slice(0, -1)},${extra}}`;

describe("createJwtVerifier: every refusal names its reason", () => {
  let v: ReturnType<typeof createJwtVerifier>;
  let h: string;
  let p: string;
  let s: string;
  beforeAll(async () => {
    v = createJwtVerifier([staticCfg]);
    [h, p, s] = (await sign(rsa.privateKey)).split(".") as [string, string, string];
  });

  it.each([
    ["non-string input", () => undefined as unknown as string, "Malformed token"],
    ["an empty string", () => "", "Malformed token"],
    ["one part", () => h, "Malformed token"],
    ["two valid parts", () => `${h}.${p}`, "Malformed token"],
    ["four parts", () => `${h}.${p}.${s}.${s}`, "Malformed token"],
    ["an empty header", () => `.${p}.${s}`, "Malformed token header"],
    ["a null header", () => `${b64("null")}.${p}.${s}`, "Malformed token header"],
    ["a number header", () => `${b64("5")}.${p}.${s}`, "Malformed token header"],
    ["an array header", () => `${b64([RS256_HEADER])}.${p}.${s}`, "Malformed token header"],
    ["a non-JSON header", () => `${b64("not json")}.${p}.${s}`, "Malformed token header"],
    ["a header without alg", () => rs256Token({ kid: "k1" }, validPayload()), 'Token header has no "alg"'],
    ["a numeric alg", () => rs256Token({ alg: 256, kid: "k1" }, validPayload()), 'Token header has no "alg"'],
    ["a null payload", () => rs256Token(RS256_HEADER, "null"), "Malformed token payload"],
    ["a number payload", () => rs256Token(RS256_HEADER, "5"), "Malformed token payload"],
    ["an array payload", () => rs256Token(RS256_HEADER, [validPayload()]), "Malformed token payload"],
    ["a non-JSON payload", () => rs256Token(RS256_HEADER, "{oops"), "Malformed token payload"],
    ["a signature with a dot", () => `${h}.${p}.${s.slice(0, 10)}.`, "Malformed token"],
    ["a signature with padding", () => `${h}.${p}.${s}==`, "Malformed token signature"],
    ["a numeric kid", () => rs256Token({ alg: "RS256", kid: 1 }, validPayload()), 'Invalid "kid" header'],
    [
      "a critical header",
      () => rs256Token({ ...RS256_HEADER, crit: ["x"] }, validPayload()),
      "Unsupported critical header parameters",
    ],
  ])("TOKEN_MALFORMED for %s", async (_name, token, message) => {
    await expectCode(v.verify(token()), "TOKEN_MALFORMED", message);
  });

  it.each([
    [
      "no exp",
      () => rs256Token(RS256_HEADER, { ...validPayload(), exp: undefined }),
      'Token has no valid "exp" claim',
    ],
    [
      "a string exp",
      () => rs256Token(RS256_HEADER, { ...validPayload(), exp: "9999999999" }),
      'Token has no valid "exp" claim',
    ],
    // Infinity would never expire: a finite number is required.
    [
      "an infinite exp",
      () => rs256Token(RS256_HEADER, rawPayload('"exp":1e400')),
      'Token has no valid "exp" claim',
    ],
    [
      "a string nbf",
      () => rs256Token(RS256_HEADER, { ...validPayload(), nbf: "now" }),
      'Invalid "nbf" claim',
    ],
    [
      "an nbf of minus infinity",
      () => rs256Token(RS256_HEADER, rawPayload('"nbf":-1e400')),
      'Invalid "nbf" claim',
    ],
    [
      "an nbf in the future",
      () => rs256Token(RS256_HEADER, { ...validPayload(), nbf: now() + 3600 }),
      "Token is not yet valid",
    ],
    [
      "an iat of minus infinity",
      () => rs256Token(RS256_HEADER, rawPayload('"iat":-1e400')),
      'Invalid "iat" claim',
    ],
    [
      "another audience",
      () => rs256Token(RS256_HEADER, { ...validPayload(), aud: "other" }),
      'Unexpected "aud" claim',
    ],
    [
      "a list of other audiences",
      () => rs256Token(RS256_HEADER, { ...validPayload(), aud: ["a", 5] }),
      'Unexpected "aud" claim',
    ],
    [
      "no audience",
      () => rs256Token(RS256_HEADER, { ...validPayload(), aud: undefined }),
      'Missing "aud" claim',
    ],
    [
      "a numeric audience",
      () => rs256Token(RS256_HEADER, { ...validPayload(), aud: 5 }),
      'Missing "aud" claim',
    ],
    ["a numeric sub", () => rs256Token(RS256_HEADER, { ...validPayload(), sub: 42 }), 'Invalid "sub" claim'],
    [
      "an unknown issuer",
      () => rs256Token(RS256_HEADER, { ...validPayload(), iss: "https://other.test" }),
      "Unknown token issuer",
    ],
  ])("CLAIM_INVALID for %s", async (_name, token, message) => {
    await expectCode(v.verify(token()), "CLAIM_INVALID", message);
  });

  it("names the other refusals", async () => {
    await expectCode(
      v.verify(rs256Token(RS256_HEADER, { ...validPayload(), exp: now() - 3600 })),
      "TOKEN_EXPIRED",
      "Token has expired",
    );
    await expectCode(
      v.verify(await rawToken({ alg: "none" }, validPayload())),
      "ALG_NOT_ALLOWED",
      "Unsigned tokens are not accepted",
    );
    await expectCode(
      v.verify(await sign(ec.privateKey, { alg: "ES256", kid: "ec1" })),
      "ALG_NOT_ALLOWED",
      "Token algorithm not allowed",
    );
    await expectCode(
      v.verify(await sign(rsa.privateKey, { kid: "k9" })),
      "UNKNOWN_KEY",
      "Invalid token signature",
    );
    await expectCode(v.verify("a".repeat(8193)), "TOKEN_TOO_LARGE", "Token too large");
  });

  it("accepts tokens without the optional sub, iat and nbf, and omits kid when the token has none", async () => {
    const { sub: _sub, iat: _iat, ...bare } = validPayload();
    const res = await v.verify(rs256Token({ alg: "RS256" }, bare));
    expect(res.payload).toEqual(bare);
    expect(res).not.toHaveProperty("kid");
  });

  it("accepts a token of exactly maxTokenBytes", async () => {
    const token = await sign(rsa.privateKey);
    const exact = createJwtVerifier([staticCfg], { maxTokenBytes: token.length });
    await expect(exact.verify(token)).resolves.toMatchObject({ providerIssuer: ISS });
    await expectCode(
      createJwtVerifier([staticCfg], { maxTokenBytes: token.length - 1 }).verify(token),
      "TOKEN_TOO_LARGE",
    );
  });

  it("refuses a segment one character too long, though Buffer decodes it to the same bytes", async () => {
    // A header of a length divisible by 4, plus one character: 6 bits, no byte.
    let header = b64(RS256_HEADER);
    for (let extra = ""; header.length % 4 !== 0; extra += " ")
      header = b64(`{"alg":"RS256","kid":"k1"${extra}}`);
    const longer = `${header}A`;
    expect(Buffer.from(longer, "base64url").equals(Buffer.from(header, "base64url"))).toBe(true);
    const payload = b64(validPayload());
    await expect(v.verify(signSegments(rsa.privateKey, header, payload))).resolves.toBeTruthy();
    await expectCode(
      v.verify(signSegments(rsa.privateKey, longer, payload)),
      "TOKEN_MALFORMED",
      "Malformed token header",
    );
  });

  it("refuses every dirty spare bit of a signature's last character", async () => {
    // 342 characters: the last one carries 2 bits of data and 4 spare bits.
    expect(s.length % 4).toBe(2);
    const last = B64URL_CHARS.indexOf(s[s.length - 1] as string);
    for (const bit of [0x01, 0x02, 0x04, 0x08]) {
      const dirty = `${s.slice(0, -1)}${B64URL_CHARS[last ^ bit]}`;
      expect(Buffer.from(dirty, "base64url").equals(Buffer.from(s, "base64url"))).toBe(true);
      await expectCode(v.verify(`${h}.${p}.${dirty}`), "TOKEN_MALFORMED", "Malformed token signature");
    }
  });
});

describe("createJwtVerifier: algorithms", () => {
  /** A signature over `header.payload` made by node:crypto with explicit options. */
  function signedWith(alg: string, key: Key, options: { digest: string | null; pssSalt?: number }): string {
    const header = b64({ alg, kid: "any" });
    const payload = b64(validPayload());
    const data = Buffer.from(`${header}.${payload}`);
    const k = KeyObject.from(key);
    const signature =
      options.pssSalt === undefined
        ? cryptoSign(options.digest, data, k)
        : cryptoSign(options.digest, data, {
            key: k,
            padding: cryptoConstants.RSA_PKCS1_PSS_PADDING,
            saltLength: options.pssSalt,
          });
    return `${header}.${payload}.${signature.toString("base64url")}`;
  }

  const ALGS = [
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
    "Ed25519",
  ];
  const pairs = new Map<string, Pair>();
  beforeAll(async () => {
    // The RSA algorithms share `rsa`'s key material (a 2048-bit key pair takes ~0.4 s to make).
    const rsaPrivate = await exportJWK(rsa.privateKey);
    for (const alg of ALGS) {
      if (!alg.startsWith("RS") && !alg.startsWith("PS")) {
        pairs.set(alg, await makePair(alg, "any"));
        continue;
      }
      const privateKey = (await importJWK(rsaPrivate, alg, { extractable: true })) as CryptoKey;
      const publicKey = (await importJWK({ ...rsa.jwk, alg }, alg)) as CryptoKey;
      pairs.set(alg, { privateKey, publicKey, jwk: { ...rsa.jwk, alg, kid: "any" } });
    }
  });

  const verifierFor = (alg: string) =>
    createJwtVerifier([
      { issuer: ISS, audience: AUD, algorithms: [alg], jwks: { keys: [pairs.get(alg)?.jwk as JsonWebKey] } },
    ]);

  it.each(ALGS)("accepts %s when pinned, and refuses its signature under a flipped bit", async (alg) => {
    const pair = pairs.get(alg) as Pair;
    const token = await sign(pair.privateKey, { alg, kid: "any" });
    await expect(verifierFor(alg).verify(token)).resolves.toMatchObject({ kid: "any" });
    const [th, tp, ts] = token.split(".") as [string, string, string];
    const sig = Buffer.from(ts, "base64url");
    sig[5] = (sig[5] as number) ^ 0x01;
    await expectCode(
      verifierFor(alg).verify(`${th}.${tp}.${sig.toString("base64url")}`),
      "INVALID_SIGNATURE",
    );
  });

  it.each([
    ["RS256", "sha512"],
    ["RS384", "sha256"],
    ["RS512", "sha384"],
  ])("refuses an %s token whose PKCS#1 signature hashed with %s", async (alg, digest) => {
    const pair = pairs.get(alg) as Pair;
    const token = signedWith(alg, pair.privateKey, { digest });
    await expectCode(verifierFor(alg).verify(token), "INVALID_SIGNATURE");
  });

  it.each([
    ["PS256", "sha256", 32],
    ["PS384", "sha384", 48],
    ["PS512", "sha512", 64],
  ])("%s requires a salt of the digest's size (%s, %i bytes)", async (alg, digest, salt) => {
    const pair = pairs.get(alg) as Pair;
    await expect(
      verifierFor(alg).verify(signedWith(alg, pair.privateKey, { digest, pssSalt: salt })),
    ).resolves.toBeTruthy();
    await expectCode(
      verifierFor(alg).verify(signedWith(alg, pair.privateKey, { digest, pssSalt: salt + 1 })),
      "INVALID_SIGNATURE",
    );
  });
});

describe("createJwtVerifier: provider configuration", () => {
  const keys = () => ({ keys: [rsa.jwk as JsonWebKey] });
  it.each([
    ["an empty issuer", { issuer: "", audience: AUD }, /issuer is required/],
    ["no issuer", { issuer: undefined as unknown as string, audience: AUD }, /issuer is required/],
    ["an empty audience list", { issuer: ISS, audience: [] }, /audience is required/],
    ["an empty audience", { issuer: ISS, audience: "" }, /audience is required/],
    ["an empty audience in a list", { issuer: ISS, audience: [AUD, ""] }, /audience is required/],
    ["a non-string audience", { issuer: ISS, audience: [5 as unknown as string] }, /audience is required/],
    [
      "an empty algorithm list",
      { issuer: ISS, audience: AUD, algorithms: [] },
      /algorithms must not be empty/,
    ],
  ])("refuses %s", (_name, cfg, message) => {
    expect(() => createJwtVerifier([{ ...cfg, jwks: keys() }])).toThrow(message);
  });
});
