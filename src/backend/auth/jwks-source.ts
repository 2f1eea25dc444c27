/**
 * JWKS key sources for the JWT verifier: static key sets, key sets read from an
 * in-memory config store (`getJwks`), and remote JWKS endpoints.
 *
 * Keys are imported once into node:crypto `KeyObject`s and cached, because
 * importing a JWK costs far more than verifying a signature with it.
 * Only asymmetric public keys are ever imported: symmetric (`oct`) keys are
 * dropped so an HMAC "secret" can never be derived from a key set.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { TokenError, TokenKeysUnavailable } from "./token-errors.ts";
import { UnknownKeyRefetch } from "./unknown-key-refetch.ts";

/** Key family an algorithm needs; used to match JWKs to a token's `alg`. */
interface AlgSpec {
  kty: "RSA" | "EC" | "OKP";
  /** required curve(s) for EC/OKP keys */
  crv?: readonly string[];
}

/** Asymmetric JWS algorithms this platform can verify. HMAC is deliberately absent. */
export const ALG_SPECS: Readonly<Record<string, AlgSpec>> = {
  RS256: { kty: "RSA" },
  RS384: { kty: "RSA" },
  RS512: { kty: "RSA" },
  PS256: { kty: "RSA" },
  PS384: { kty: "RSA" },
  PS512: { kty: "RSA" },
  ES256: { kty: "EC", crv: ["P-256"] },
  ES384: { kty: "EC", crv: ["P-384"] },
  ES512: { kty: "EC", crv: ["P-521"] },
  EdDSA: { kty: "OKP", crv: ["Ed25519", "Ed448"] },
  Ed25519: { kty: "OKP", crv: ["Ed25519"] },
};

/** One usable public key from a JWKS. */
export interface ParsedKey {
  kid?: string;
  kty: "RSA" | "EC" | "OKP";
  crv?: string;
  /** `alg` pinned by the JWK itself, if any */
  alg?: string;
  key: KeyObject;
}

/** An imported key set with a kid index for O(1) lookup. */
export interface KeySet {
  keys: ParsedKey[];
  byKid: Map<string, ParsedKey[]>;
}

/** Whether `key` may be used to verify a token signed with `alg`. */
export function keyMatchesAlg(key: ParsedKey, alg: string): boolean {
  const spec = ALG_SPECS[alg];
  if (!spec || key.kty !== spec.kty) return false;
  if (key.alg !== undefined && key.alg !== alg) return false;
  if (spec.crv && (key.crv === undefined || !spec.crv.includes(key.crv))) return false;
  return true;
}

/** RSA keys below this size are rejected (same floor as jose / RFC 7518). */
const MIN_RSA_BITS = 2048;

function importOne(raw: unknown): ParsedKey | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const jwk = raw as Record<string, unknown>;
  // Keys explicitly meant for encryption or without a verify op must not verify signatures.
  if (jwk.use !== undefined && jwk.use !== "sig") return undefined;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes("verify")))
    return undefined;
  const kid = typeof jwk.kid === "string" ? jwk.kid : undefined;
  const alg = typeof jwk.alg === "string" ? jwk.alg : undefined;
  // Copy only public members: a JWKS accidentally containing private keys must
  // still yield public-only KeyObjects, and unknown members are ignored.
  let pub: Record<string, string>;
  switch (jwk.kty) {
    case "RSA":
      if (typeof jwk.n !== "string" || typeof jwk.e !== "string") return undefined;
      pub = { kty: "RSA", n: jwk.n, e: jwk.e };
      break;
    case "EC":
      if (typeof jwk.crv !== "string" || typeof jwk.x !== "string" || typeof jwk.y !== "string")
        return undefined;
      pub = { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y };
      break;
    case "OKP":
      if (typeof jwk.crv !== "string" || typeof jwk.x !== "string") return undefined;
      pub = { kty: "OKP", crv: jwk.crv, x: jwk.x };
      break;
    default:
      return undefined; // 'oct' and anything unknown: never usable
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pub, format: "jwk" });
  } catch {
    return undefined;
  }
  if (pub.kty === "RSA" && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) return undefined;
  return { kid, kty: pub.kty as ParsedKey["kty"], crv: pub.crv, alg, key };
}

/**
 * Parse and import a JWKS (JSON string or `{keys:[...]}` object).
 * Unusable keys are skipped; a set with no usable key throws `NO_KEYS`.
 */
export function parseJwks(input: string | { keys: unknown[] }): KeySet {
  let doc: unknown = input;
  if (typeof input === "string") {
    try {
      doc = JSON.parse(input);
    } catch {
      throw new TokenKeysUnavailable("JWKS is not valid JSON");
    }
  }
  const rawKeys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(rawKeys)) throw new TokenKeysUnavailable('JWKS has no "keys" array');
  const keys: ParsedKey[] = [];
  const byKid = new Map<string, ParsedKey[]>();
  for (const raw of rawKeys) {
    const k = importOne(raw);
    if (!k) continue;
    keys.push(k);
    if (k.kid !== undefined) {
      const list = byKid.get(k.kid);
      if (list) list.push(k);
      else byKid.set(k.kid, [k]);
    }
  }
  if (keys.length === 0) throw new TokenKeysUnavailable("JWKS contains no usable public keys");
  return { keys, byKid };
}

/**
 * Process-wide cache of parsed key sets keyed by the exact JWKS string, so
 * several verifiers (or a config value flipping back) share imports. Bounded
 * because config strings can change arbitrarily often.
 */
const PARSED_CACHE_MAX = 32;
const parsedCache = new Map<string, KeySet>();

/** `parseJwks` for strings, memoised by string value (small LRU). */
export function parseJwksCached(json: string): KeySet {
  const hit = parsedCache.get(json);
  if (hit) {
    parsedCache.delete(json);
    parsedCache.set(json, hit);
    return hit;
  }
  const ks = parseJwks(json);
  parsedCache.set(json, ks);
  if (parsedCache.size > PARSED_CACHE_MAX) {
    const oldest = parsedCache.keys().next().value;
    if (oldest !== undefined) parsedCache.delete(oldest);
  }
  return ks;
}

/** Where a provider's keys come from. */
export interface JwksSource {
  /**
   * Current key set. May return synchronously (static / config-store sources)
   * so the hot path avoids an extra await.
   */
  get(): KeySet | Promise<KeySet>;
  /**
   * Called when a token names a key the current set lacks. Remote sources
   * refetch (rate-limited) and return the new set; others return undefined.
   */
  refresh?(): Promise<KeySet | undefined>;
}

/** A key set fixed at construction time; parsed eagerly so bad config fails fast. */
export class StaticJwksSource implements JwksSource {
  private readonly keySet: KeySet;
  constructor(jwks: string | { keys: unknown[] }) {
    this.keySet = typeof jwks === "string" ? parseJwksCached(jwks) : parseJwks(jwks);
  }
  get(): KeySet {
    return this.keySet;
  }
}

/**
 * A key set read from a getter on every verification (e.g. an in-memory config
 * store). Re-parses only when the returned string changes, so rotation takes
 * effect immediately at the cost of one string comparison per call.
 */
export class DynamicJwksSource implements JwksSource {
  private lastJson: string | undefined;
  private lastSet: KeySet | undefined;
  constructor(private readonly getJwks: () => string | undefined) {}
  get(): KeySet {
    const json = this.getJwks();
    if (json === undefined || json === "") throw new TokenKeysUnavailable("No JWKS configured");
    if (json === this.lastJson && this.lastSet) return this.lastSet;
    const ks = parseJwksCached(json); // throws NO_KEYS on bad input; keep previous cache untouched
    this.lastJson = json;
    this.lastSet = ks;
    return ks;
  }
}

/** Options for {@link RemoteJwksSource}. */
export interface RemoteJwksOptions {
  fetch?: typeof fetch;
  /** minimum time between refetches triggered by unknown kids (default 30 s) */
  minRefetchIntervalMs?: number;
  /** refetch (blocking, falling back to old keys on failure) once the set is this old (default 10 min) */
  maxAgeMs?: number;
  /** per-request timeout (default 5 s) */
  timeoutMs?: number;
  /**
   * A token of an unknown kid waits for the next refetch allowed (at most `minRefetchIntervalMs`
   * away) instead of being checked against the keys at hand: for an issuer that signs with a new
   * key as soon as it made it (this server's own key set after a graceful rotation), with a short
   * interval. Default false: a third-party issuer publishes its keys before signing with them.
   */
  awaitRefetch?: boolean;
  /** clock, for tests */
  now?: () => number;
}

/** Longest JWKS response accepted: a JWKS is a few KB at most, so anything near this is absurd. */
export const MAX_JWKS_BYTES = 512 * 1024;

/**
 * A JWKS endpoint. Fetched lazily on first use and cached; refetched when a
 * token carries an unknown kid (key rotation) but at most once per
 * `minRefetchIntervalMs` (the unknown-key throttle, `unknown-key-refetch.ts`,
 * which every fetch restarts), so garbage kids cannot make us hammer the IdP.
 * Also refreshed after `maxAgeMs` so keys the IdP revoked stop being trusted.
 * Concurrent callers share one in-flight request.
 */
export class RemoteJwksSource implements JwksSource {
  private keySet: KeySet | undefined;
  private fetchedAt = 0;
  private inflight: Promise<KeySet> | undefined;
  /** Paces refetches; with `awaitRefetch`, the unknown kids within the interval wait for its next. */
  private readonly refetch: UnknownKeyRefetch<KeySet | undefined>;
  private readonly awaitRefetch: boolean;
  private readonly fetchFn: typeof fetch;
  private readonly minInterval: number;
  private readonly maxAge: number;
  private readonly timeout: number;
  private readonly now: () => number;
  /** number of HTTP requests made (diagnostics / tests) */
  fetchCount = 0;

  constructor(
    private readonly url: string,
    opts: RemoteJwksOptions = {},
  ) {
    this.fetchFn = opts.fetch ?? globalThis.fetch;
    this.minInterval = opts.minRefetchIntervalMs ?? 30_000;
    this.maxAge = opts.maxAgeMs ?? 600_000;
    this.timeout = opts.timeoutMs ?? 5_000;
    this.now = opts.now ?? Date.now;
    this.awaitRefetch = opts.awaitRefetch ?? false;
    this.refetch = new UnknownKeyRefetch({
      round: () => this.load().catch(() => this.keySet),
      minIntervalMs: this.minInterval,
      now: this.now,
    });
  }

  /** When the last fetch began (`-Infinity`: none yet). */
  private get lastAttemptAt(): number {
    return this.refetch.lastBeganAt;
  }

  get(): KeySet | Promise<KeySet> {
    if (this.keySet) {
      if (this.now() - this.fetchedAt < this.maxAge) return this.keySet;
      const stale = this.keySet;
      // Stale: try to refresh, but an IdP outage must not take auth down with it: after a failed
      // attempt, keep serving the old keys and retry at most once per `minInterval`.
      const lastFailed = this.lastAttemptAt > this.fetchedAt;
      if (!this.inflight && lastFailed && this.now() - this.lastAttemptAt < this.minInterval) return stale;
      return this.load().catch(() => stale);
    }
    return this.load();
  }

  async refresh(): Promise<KeySet | undefined> {
    if (this.inflight) return this.inflight.catch(() => this.keySet);
    if (this.refetch.waitMs() > 0) return this.awaitRefetch ? this.refetch.next() : this.keySet;
    return this.load().catch(() => this.keySet);
  }

  private load(): Promise<KeySet> {
    if (this.inflight) return this.inflight;
    // The first load is also rate-limited after a failure, so a down IdP is not hammered.
    if (!this.keySet && this.now() - this.lastAttemptAt < this.minInterval) {
      return Promise.reject(new TokenKeysUnavailable("JWKS endpoint unavailable"));
    }
    this.refetch.began();
    const p = this.doFetch().then(
      (ks) => {
        this.keySet = ks;
        this.fetchedAt = this.now();
        this.inflight = undefined;
        return ks;
      },
      (err: unknown) => {
        this.inflight = undefined;
        throw err instanceof TokenError ? err : new TokenKeysUnavailable("JWKS endpoint unavailable");
      },
    );
    this.inflight = p;
    return p;
  }

  private async doFetch(): Promise<KeySet> {
    this.fetchCount++;
    const res = await this.fetchFn(this.url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(this.timeout),
    });
    if (!res.ok) throw new TokenKeysUnavailable(`JWKS endpoint returned HTTP ${res.status}`);
    return parseJwks(await readCapped(res));
  }
}

/**
 * A response body as text, refused as soon as it passes {@link MAX_JWKS_BYTES}: `res.text()` would
 * buffer whatever the endpoint sends until the timeout, however large, before it could be refused.
 */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JWKS_BYTES) {
      // Stop reading and close the connection; the rest is never downloaded.
      reader.cancel().catch(() => {});
      throw new TokenKeysUnavailable("JWKS response too large");
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
