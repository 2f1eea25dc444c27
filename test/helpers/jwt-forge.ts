/**
 * Tokens for attack tests: signed with the deployment's own private key (decrypted from the `JWKS`
 * variable with `SERVICE_AUTH_SECRET`, as Better Auth stores it), with a foreign key, with HS256
 * over the public key, or not at all.
 */
import { createHmac } from "node:crypto";
import { symmetricDecrypt } from "better-auth/crypto";
import { generateKeyPair, importJWK, type JWTPayload, SignJWT } from "jose";

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The first key of a `JWKS` variable value: its kid, private key (decrypted) and public JWK. */
export async function storedSigningKey(jwksVar: string, secret: string) {
  const [row] = JSON.parse(jwksVar) as { id: string; publicKey: string; privateKey: string }[];
  const privateJwk = JSON.parse(await symmetricDecrypt({ key: secret, data: JSON.parse(row.privateKey) }));
  return {
    kid: row.id,
    privateKey: await importJWK(privateJwk, "RS256"),
    /** The private JWK's `d` (the secret exponent), to look for in logs. */
    privateExponent: privateJwk.d as string,
    publicJwk: JSON.parse(row.publicKey) as Record<string, unknown>,
  };
}

/** Signs `payload` with RS256 and `kid` using `key`. */
export function signRs256(key: Parameters<SignJWT["sign"]>[0], kid: string, payload: JWTPayload) {
  return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid, typ: "JWT" }).sign(key);
}

/** A fresh RSA key nobody trusts. */
export async function foreignKey() {
  return (await generateKeyPair("RS256")).privateKey;
}

/** `alg: none`: header and payload, empty signature. */
export function unsignedToken(payload: object, kid?: string): string {
  return `${b64({ alg: "none", typ: "JWT", ...(kid ? { kid } : {}) })}.${b64(payload)}.`;
}

/** HS256 "signed" with the public key as the HMAC secret (algorithm confusion). */
export function hs256WithPublicKey(payload: object, kid: string, publicKeyMaterial: string): string {
  const signingInput = `${b64({ alg: "HS256", typ: "JWT", kid })}.${b64(payload)}`;
  const signature = createHmac("sha256", publicKeyMaterial).update(signingInput).digest("base64url");
  return `${signingInput}.${signature}`;
}

/** Replaces a token's payload, keeping its header and signature. */
export function withPayload(token: string, payload: object): string {
  const [header, , signature] = token.split(".");
  return `${header}.${b64(payload)}.${signature}`;
}
