/**
 * RS256 session tokens for the `postgres-app` fixture (`fixtures/postgres-app.ts`): a fresh key
 * pair, its public JWK for the server's `BENCH_JWK`, and signed tokens naming a user and session.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";

export interface Rs256Tokens {
  /** The public key as a JSON JWK (`kid` "k1", `alg` RS256). */
  jwk: string;
  /** A token for `sub` with claim `sessionId`, issued now, valid 15 minutes. */
  sign(sub: string, sessionId: string): Promise<string>;
}

export async function rs256Tokens(issuer: string, audience: string): Promise<Rs256Tokens> {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = JSON.stringify({ ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" });
  return {
    jwk,
    sign: (sub, sessionId) =>
      new SignJWT({ sessionId })
        .setProtectedHeader({ alg: "RS256", kid: "k1" })
        .setSubject(sub)
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime("15m")
        .sign(privateKey),
  };
}
