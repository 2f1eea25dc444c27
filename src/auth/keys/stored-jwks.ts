/**
 * Signing keys as they travel through the `JWKS` variable: the rows of the `jwks` table
 * (`{id, publicKey, privateKey, createdAt, alg}`; the private key is encrypted with
 * `SERVICE_AUTH_SECRET` by Better Auth), serialized as one JSON array. Verifiers only ever see the
 * public half, derived here.
 */

export const DEFAULT_ALG = "RS256";

/** One signing key row as stored in the `jwks` table and in the `JWKS` variable. */
export interface StoredJwk {
  id: string;
  publicKey: string;
  privateKey: string;
  createdAt: number;
  alg?: string;
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
    return {
      id: r.id,
      publicKey: r.publicKey,
      privateKey: r.privateKey,
      createdAt,
      alg: r.alg ?? DEFAULT_ALG,
    };
  });
  if (parsedCache.size > 16) parsedCache.clear();
  parsedCache.set(value, out);
  return out;
}

const publicCache = new Map<string, string>();

/** The public JSON Web Key Set (`{"keys":[…]}`) of the `JWKS` variable, for verifiers and the jwks endpoint. */
export function publicJwksOf(value: string): string {
  const cached = publicCache.get(value);
  if (cached) return cached;
  const keys = parseStoredJwks(value).map((row) => {
    const jwk = JSON.parse(row.publicKey) as Record<string, unknown>;
    return { ...jwk, alg: row.alg ?? DEFAULT_ALG, use: "sig", kid: row.id };
  });
  const json = JSON.stringify({ keys });
  if (publicCache.size > 16) publicCache.clear();
  publicCache.set(value, json);
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
  }[],
): string {
  return JSON.stringify(
    rows.map((r) => ({
      id: r.id,
      publicKey: r.publicKey,
      privateKey: r.privateKey,
      createdAt: r.createdAt instanceof Date ? r.createdAt.getTime() : r.createdAt,
      alg: r.alg ?? DEFAULT_ALG,
    })),
  );
}
