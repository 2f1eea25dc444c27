/**
 * Why a bearer token is refused (step 1), one class per failure with its code (jose's style), and
 * the codes' registry entries. Messages never contain token or key material, so they are safe to
 * log and to return to clients. Clients see every one as `UNAUTHORIZED` (401) naming the reason.
 */
import type { ErrorCodeSpec } from "../error-code-spec.ts";

const refusal = (meaning: string): ErrorCodeSpec => ({ status: 401, ws: "auth_error", meaning });

/** The token refusals' codes, merged into the error registry (`errors.ts`). */
export const TOKEN_ERROR_CODES = {
  TOKEN_MALFORMED: refusal("the token is not a well-formed JWS"),
  TOKEN_EXPIRED: refusal("the token's `exp` has passed"),
  TOKEN_TOO_LARGE: refusal("the token exceeds the size limit"),
  INVALID_SIGNATURE: refusal("the signature does not verify"),
  UNKNOWN_KEY: refusal("no key of the issuer's key set matches the token"),
  ALG_NOT_ALLOWED: refusal("the token's algorithm is not accepted"),
  CLAIM_INVALID: refusal("a claim (iss, aud, nbf, iat, sub) is missing or wrong"),
  NO_KEYS: refusal("the issuer's key set is missing, invalid or unreachable"),
} as const satisfies Record<string, ErrorCodeSpec>;

/** Machine-readable reason of a {@link TokenError}. */
export type TokenErrorCode = keyof typeof TOKEN_ERROR_CODES;

/** Any refusal of a token; `code` says which (each has its own subclass below). */
export class TokenError extends Error {
  /** Machine-readable reason. */
  readonly code: TokenErrorCode;
  constructor(code: TokenErrorCode, message: string) {
    super(message);
    this.name = "TokenError";
    this.code = code;
  }
}

/** Not a well-formed compact JWS (segments, base64url, header). */
export class TokenMalformed extends TokenError {
  static readonly code = "TOKEN_MALFORMED";
  constructor(message: string) {
    super(TokenMalformed.code, message);
    this.name = "TokenMalformed";
  }
}

/** Its `exp` has passed. */
export class TokenExpired extends TokenError {
  static readonly code = "TOKEN_EXPIRED";
  constructor(message: string) {
    super(TokenExpired.code, message);
    this.name = "TokenExpired";
  }
}

/** Longer than the verifier accepts. */
export class TokenTooLarge extends TokenError {
  static readonly code = "TOKEN_TOO_LARGE";
  constructor(message: string) {
    super(TokenTooLarge.code, message);
    this.name = "TokenTooLarge";
  }
}

/** The signature does not verify with the key it names. */
export class TokenSignatureInvalid extends TokenError {
  static readonly code = "INVALID_SIGNATURE";
  constructor(message: string) {
    super(TokenSignatureInvalid.code, message);
    this.name = "TokenSignatureInvalid";
  }
}

/** No key of the issuer's key set fits the token (`kid`, key type). */
export class TokenKeyUnknown extends TokenError {
  static readonly code = "UNKNOWN_KEY";
  constructor(message: string) {
    super(TokenKeyUnknown.code, message);
    this.name = "TokenKeyUnknown";
  }
}

/** Its algorithm is not one the issuer's provider accepts (or it is unsigned). */
export class TokenAlgNotAllowed extends TokenError {
  static readonly code = "ALG_NOT_ALLOWED";
  constructor(message: string) {
    super(TokenAlgNotAllowed.code, message);
    this.name = "TokenAlgNotAllowed";
  }
}

/** A claim (iss, aud, nbf, iat, sub, exp's shape) is missing or wrong. */
export class TokenClaimInvalid extends TokenError {
  static readonly code = "CLAIM_INVALID";
  constructor(message: string) {
    super(TokenClaimInvalid.code, message);
    this.name = "TokenClaimInvalid";
  }
}

/** The issuer's key set is missing, invalid or unreachable. */
export class TokenKeysUnavailable extends TokenError {
  static readonly code = "NO_KEYS";
  constructor(message: string) {
    super(TokenKeysUnavailable.code, message);
    this.name = "TokenKeysUnavailable";
  }
}
