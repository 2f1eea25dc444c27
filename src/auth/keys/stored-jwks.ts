/**
 * Signing keys as they travel through the `JWKS` variable: the rows of the `jwks` table
 * (`{id, publicKey, privateKey, createdAt, alg}`; the private key is encrypted with
 * `SERVICE_AUTH_SECRET` by Better Auth), serialized as one JSON array. Verifiers only ever see the
 * public half, derived here.
 *
 * A key may carry `expiresAt` (ms): set by a graceful rotation on the keys it replaced, it is the
 * moment the key stops verifying. Verifiers drop such a key at that moment by the clock, on every
 * instance at once, whether or not the scheduled retirement has removed it yet.
 */

export const DEFAULT_ALG = "RS256";

/** One signing key row as stored in the `jwks` table and in the `JWKS` variable. */
export interface StoredJwk {
  id: string;
  publicKey: string;
  privateKey: string;
  createdAt: number;
  alg?: string;
  /** Verifies until then (ms since epoch); absent: until the next rotation. */
  expiresAt?: number;
}

const parsedCache = new Map<string, StoredJwk[]>();

/** Parses the `JWKS` variable; throws a clear error for anything that is not a key row list. */
export function parseStoredJwks(value: string): StoredJwk[] {
  const cached = parsedCache.get(value);
  if (cached) return cached;
  let rows: unknown;
  try {
    rows = JSON.parse(value);
  } catch {
    throw new Error(
      "JWKS is not valid JSON; run `npm run cli -- run auth:getLatestJwks` and store its output in JWKS",
    );
  }
  if (!Array.isArray(rows) || rows.length === 0)
    throw new Error("JWKS must be a non-empty JSON array of keys");
  const out = rows.map((r, i) => {
    if (
      typeof r !== "object" ||
      r === null ||
      typeof r.id !== "string" ||
      typeof r.publicKey !== "string" ||
      typeof r.privateKey !== "string"
    ) {
      throw new Error(`JWKS key ${i} lacks id, publicKey or privateKey`);
    }
    const createdAt = typeof r.createdAt === "number" ? r.createdAt : Date.parse(String(r.createdAt));
    const row: StoredJwk = {
      id: r.id,
      publicKey: r.publicKey,
      privateKey: r.privateKey,
      createdAt,
      alg: r.alg ?? DEFAULT_ALG,
    };
    if (r.expiresAt != null) {
      const expiresAt = typeof r.expiresAt === "number" ? r.expiresAt : Date.parse(String(r.expiresAt));
      if (Number.isNaN(expiresAt)) throw new Error(`JWKS key ${i} has an invalid expiresAt`);
      row.expiresAt = expiresAt;
    }
    return row;
  });
  if (parsedCache.size > 16) parsedCache.clear();
  parsedCache.set(value, out);
  return out;
}

const publicCache = new Map<string, string>();

/**
 * Whether a key still verifies at `now`: not retired by a graceful rotation's overlap.
 *
 * @example
 * ```ts
 * import { isActiveKey } from "service-auth/auth";
 *
 * isActiveKey({}); // true: no expiry, verifies until the next rotation
 * isActiveKey({ expiresAt: Date.now() - 1000 }); // false: retired by a graceful rotation
 * ```
 */
export function isActiveKey(row: Pick<StoredJwk, "expiresAt">, now = Date.now()): boolean {
  return row.expiresAt === undefined || row.expiresAt > now;
}

/**
 * The public JSON Web Key Set (`{"keys":[…]}`) of the `JWKS` variable, for verifiers and the jwks
 * endpoint: the keys active at `now` (a retired key is left out, so its tokens get "Invalid token
 * signature").
 */
export function publicJwksOf(value: string, now = Date.now()): string {
  const rows = parseStoredJwks(value);
  const active = rows.filter((row) => isActiveKey(row, now));
  const cacheKey = active.length === rows.length ? value : `${active.map((r) => r.id).join(",")}\n${value}`;
  const cached = publicCache.get(cacheKey);
  if (cached) return cached;
  const keys = active.map((row) => {
    const jwk = JSON.parse(row.publicKey) as Record<string, unknown>;
    return { ...jwk, alg: row.alg ?? DEFAULT_ALG, use: "sig", kid: row.id };
  });
  const json = JSON.stringify({ keys });
  if (publicCache.size > 16) publicCache.clear();
  publicCache.set(cacheKey, json);
  return json;
}

/** Serializes key rows (e.g. from the `jwks` table) into the `JWKS` variable's format. */
export function serializeJwks(
  rows: {
    id: string;
    publicKey: string;
    privateKey: string;
    createdAt: number | Date;
    alg?: string | null;
    expiresAt?: number | Date | null;
  }[],
): string {
  return JSON.stringify(
    rows.map((r) => ({
      id: r.id,
      publicKey: r.publicKey,
      privateKey: r.privateKey,
      createdAt: r.createdAt instanceof Date ? r.createdAt.getTime() : r.createdAt,
      alg: r.alg ?? DEFAULT_ALG,
      ...(r.expiresAt != null
        ? { expiresAt: r.expiresAt instanceof Date ? r.expiresAt.getTime() : r.expiresAt }
        : {}),
    })),
  );
}

/** A key's place in a rotation, as the admin console shows it. */
export type KeyState = "signing" | "verifying" | "retired" | "standby";

/**
 * Each key of the `JWKS` variable with its state at `now`: the newest active key signs.
 *
 * @example
 * ```ts
 * import { keyStates } from "service-auth/auth";
 *
 * // After `auth:rotateKeys '{"overlap":true}'`: which key signs, which still verify.
 * for (const key of keyStates(backend.env.get("JWKS") ?? "[]")) console.log(key.id, key.state);
 * ```
 */
export function keyStates(
  value: string,
  now = Date.now(),
): { id: string; createdAt: number; expiresAt?: number; state: KeyState }[] {
  const rows = parseStoredJwks(value);
  const active = rows.filter((row) => isActiveKey(row, now));
  const signer = active.reduce<StoredJwk | undefined>(
    (newest, row) => (!newest || row.createdAt > newest.createdAt ? row : newest),
    undefined,
  );
  return rows.map((row) => ({
    id: row.id,
    createdAt: row.createdAt,
    ...(row.expiresAt !== undefined ? { expiresAt: row.expiresAt } : {}),
    state:
      row === signer
        ? "signing"
        : !isActiveKey(row, now)
          ? "retired"
          : row.expiresAt
            ? "verifying"
            : "standby",
  }));
}
