/**
 * Order-preserving binary encoding of index keys.
 *
 * Each index entry is stored as one BLOB/bytea column whose bytewise order equals the logical
 * order of its values. SQLite and PostgreSQL compare such columns with memcmp, and JavaScript
 * compares them with `Buffer.compare`, so the database's range scans and the reactivity layer's
 * "does this write touch that read range" checks agree exactly, on every engine.
 *
 * Order of types: undefined < null < number < false < true < string < array < object. Tags stay
 * below 0xff so `prefix + 0xff` is an upper bound for every key that starts with `prefix`.
 */

const TAG_UNDEFINED = 0x01;
const TAG_NULL = 0x02;
const TAG_NUMBER = 0x10;
const TAG_FALSE = 0x20;
const TAG_TRUE = 0x21;
const TAG_STRING = 0x30;
const TAG_ARRAY = 0x40;
const TAG_OBJECT = 0x50;
/** Byte greater than every tag: appended to a prefix it bounds all keys starting with it. */
export const KEY_MAX_BYTE = 0xff;

export type KeyValue = unknown;

/**
 * Strings are encoded per UTF-16 code unit (each unit as its 1–3 byte UTF-8 form, surrogates
 * included), so byte order equals JavaScript's string order, astral characters and lone
 * surrogates included. 0x00 terminates; a NUL code unit is escaped as 0x00 0xff, which sorts it
 * first among characters yet above every terminated string, and keeps `prefix + 0xff` a strict
 * upper bound: "a\0" is not inside the range of `eq("a")`.
 */
function pushString(out: number[], s: string): void {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) out.push(0x00, 0xff);
    else if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  out.push(0x00);
}

const f64 = new Float64Array(1);
const f64bytes = new Uint8Array(f64.buffer);

function pushValue(out: number[], value: unknown): void {
  if (value === undefined) out.push(TAG_UNDEFINED);
  else if (value === null) out.push(TAG_NULL);
  else if (typeof value === "number") {
    out.push(TAG_NUMBER);
    f64[0] = value === 0 ? 0 : value; // -0 and 0 are one key
    // Big-endian, with the sign flipped for positives and all bits flipped for negatives.
    const negative = (f64bytes[7] & 0x80) !== 0;
    for (let i = 7; i >= 0; i--) {
      const b = f64bytes[i];
      out.push(negative ? ~b & 0xff : i === 7 ? b ^ 0x80 : b);
    }
  } else if (value === false) out.push(TAG_FALSE);
  else if (value === true) out.push(TAG_TRUE);
  else if (typeof value === "string") {
    out.push(TAG_STRING);
    pushString(out, value);
  } else if (Array.isArray(value)) {
    out.push(TAG_ARRAY);
    for (const item of value) {
      out.push(0x01);
      pushValue(out, item);
    }
    out.push(0x00);
  } else if (typeof value === "object") {
    out.push(TAG_OBJECT);
    for (const key of Object.keys(value as object).sort()) {
      out.push(0x01);
      pushString(out, key);
      pushValue(out, (value as Record<string, unknown>)[key]);
    }
    out.push(0x00);
  } else {
    throw new TypeError(`Cannot index a value of type ${typeof value}`);
  }
}

/** Encodes a tuple of values (the index fields in order) into one sortable key. */
export function encodeKey(values: readonly unknown[]): Buffer {
  const out: number[] = [];
  for (const v of values) pushValue(out, v);
  return Buffer.from(out);
}

/** The key just after every key that starts with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.allocUnsafe(prefix.length + 1);
  prefix.copy(end, 0);
  end[prefix.length] = KEY_MAX_BYTE;
  return end;
}

/** Half-open byte range `[lower, upper)`; a missing bound is unbounded. */
export interface KeyRange {
  lower?: Buffer;
  upper?: Buffer;
}

export function inRange(key: Buffer, range: KeyRange): boolean {
  if (range.lower && Buffer.compare(key, range.lower) < 0) return false;
  if (range.upper && Buffer.compare(key, range.upper) >= 0) return false;
  return true;
}

/** A value's type in key order (see the header); types that cannot be indexed throw like `encodeKey`. */
function typeRank(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null) return 1;
  switch (typeof value) {
    case "number":
      return 2;
    case "boolean":
      return 3;
    case "string":
      return 4;
    case "object":
      return Array.isArray(value) ? 5 : 6;
    default:
      throw new TypeError(`Cannot index a value of type ${typeof value}`);
  }
}

const order = <T extends number | string>(a: T, b: T): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The order of index keys as a comparator, without encoding anything: its sign is always the sign of
 * `Buffer.compare(encodeKey([a]), encodeKey([b]))`. So undefined < null < numbers < false < true <
 * strings < arrays < objects; numbers compare numerically (-0 equals 0), strings by UTF-16 code unit
 * (JavaScript's `<`, not code point order), arrays item by item then by length, objects by their
 * sorted keys and values. Code that filters or sorts in memory uses this so that it agrees with
 * index range reads.
 *
 * @example
 * ```ts
 * import { compareValues } from "service-auth/server";
 *
 * // Sorts in memory in the order an index range read returns.
 * const sorted = [3, "b", null, true, "a"].sort(compareValues); // [null, 3, true, "a", "b"]
 * ```
 */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (typeof a) {
    case "number":
      // NaN has no numeric order; its key (sign bit included) decides, as in the index.
      if (Number.isNaN(a) || Number.isNaN(b))
        return Math.sign(Buffer.compare(encodeKey([a]), encodeKey([b])));
      return order(a, b as number);
    case "boolean":
      return a === b ? 0 : a ? 1 : -1;
    case "string":
      return order(a, b as string);
  }
  if (ra === 5) {
    const x = a as unknown[];
    const y = b as unknown[];
    for (let i = 0; i < x.length && i < y.length; i++) {
      const c = compareValues(x[i], y[i]);
      if (c !== 0) return c;
    }
    return order(x.length, y.length);
  }
  if (ra === 6) {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    const xk = Object.keys(x).sort();
    const yk = Object.keys(y).sort();
    for (let i = 0; i < xk.length && i < yk.length; i++) {
      const c = order(xk[i], yk[i]) || compareValues(x[xk[i]], y[yk[i]]);
      if (c !== 0) return c;
    }
    return order(xk.length, yk.length);
  }
  return 0; // undefined or null
}
