/**
 * `identityOfClaims` (service-auth/server): the identity the verified claims describe, as
 * `{ ...claims, subject, issuer, tokenIdentifier }` would make it, built without the spread for speed
 * (see identity-ctx.ts). Checked against the spread itself, including the awkward `__proto__` claim.
 */
import { identityOfClaims } from "service-auth/server";
import { describe, expect, it } from "vitest";

describe("identityOfClaims", () => {
  it("equals the spread: the claims' keys in order, then subject, issuer, tokenIdentifier", () => {
    const claims = { iat: 1, sub: "u1", sessionId: "s1", iss: "https://issuer", aud: "backend", exp: 2 };
    const identity = identityOfClaims(claims);
    const spread = {
      ...claims,
      subject: "u1",
      issuer: "https://issuer",
      tokenIdentifier: "https://issuer|u1",
    };
    expect(Object.keys(identity)).toEqual(Object.keys(spread));
    expect(identity).toEqual(spread);
    // A copy: the caller's claims are not changed.
    expect(Object.keys(claims)).toEqual(["iat", "sub", "sessionId", "iss", "aud", "exp"]);
  });

  it("a subject already among the claims is replaced in place, as a spread replaces it", () => {
    const identity = identityOfClaims({ subject: "claimed", sub: "u2", iss: "i" });
    expect(Object.keys(identity)).toEqual(["subject", "sub", "iss", "issuer", "tokenIdentifier"]);
    expect(identity.subject).toBe("u2");
  });

  it("a `__proto__` claim stays an own property and does not set the prototype", () => {
    const claims = JSON.parse('{"sub":"u3","iss":"i","__proto__":{"admin":true}}') as Record<string, unknown>;
    const identity = identityOfClaims(claims);
    expect(Object.getPrototypeOf(identity)).toBe(Object.prototype);
    expect((identity as { admin?: unknown }).admin).toBeUndefined();
    expect(Object.keys(identity)).toEqual(
      Object.keys({ ...claims, subject: "", issuer: "", tokenIdentifier: "" }),
    );
    expect(Object.getOwnPropertyDescriptor(identity, "__proto__")?.value).toEqual({ admin: true });
  });

  it("missing sub and iss become empty strings", () => {
    expect(identityOfClaims({})).toEqual({ subject: "", issuer: "", tokenIdentifier: "|" });
  });
});
