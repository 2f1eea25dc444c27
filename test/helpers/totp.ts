/**
 * TOTP codes (RFC 6238 over RFC 4226's HOTP, SHA-1, 6 digits, 30 s steps — what Better Auth's
 * two-factor plugin and authenticator apps use) from a base32 secret, computed with node:crypto:
 * the one copy every test that signs in with two-factor uses.
 */
import { createHmac } from "node:crypto";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** The bytes of an RFC 4648 base32 string (padding and case ignored). */
export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, "");
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** The HOTP value of `key` at `counter` (RFC 4226 §5.3, dynamic truncation). */
export function hotp(key: Buffer, counter: number, digits = 6): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac("sha1", key).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const code = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(code % 10 ** digits).padStart(digits, "0");
}

/** The TOTP code of a base32 `secret` at `now` (RFC 6238, T0 = 0). */
export function totp(secret: string, now = Date.now(), stepSeconds = 30): string {
  return hotp(base32Decode(secret), Math.floor(now / 1000 / stepSeconds));
}

/** The TOTP code at `now` for the secret of an `otpauth://` URI (Better Auth's `totpURI`). */
export function totpOfUri(uri: string, now = Date.now()): string {
  const secret = new URL(uri).searchParams.get("secret");
  if (!secret) throw new Error(`no secret in ${uri}`);
  return totp(secret, now);
}
