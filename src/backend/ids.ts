/**
 * Document ids: 26 base32 characters of randomness (130 bits, URL-safe) followed by a 4-character
 * tag naming the table, so `db.get(id)` finds the table without a lookup and `v.id("users")`
 * can tell an id of another table.
 */
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
const RANDOM_CHARS = 26;
const TAG_CHARS = 4;
export const ID_LENGTH = RANDOM_CHARS + TAG_CHARS;

function base32(bytes: Uint8Array, chars: number): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= 0xff;
  }
  return out;
}

/** Stable 4-character tag of a table name. */
export function tableTag(table: string): string {
  return base32(createHash("sha256").update(table).digest(), TAG_CHARS);
}

/** A new unguessable id for a document of `table`. */
export function newId(tag: string): string {
  return base32(randomBytes(17), RANDOM_CHARS) + tag;
}

const ID_PATTERN = new RegExp(`^[a-z2-7]{${ID_LENGTH}}$`);

/** The tag of a well-formed id, or null. */
export function idTag(id: string): string | null {
  return typeof id === "string" && ID_PATTERN.test(id) ? id.slice(RANDOM_CHARS) : null;
}
