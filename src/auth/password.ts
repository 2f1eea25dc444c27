/**
 * Password hashing for email + password sign-in on node:crypto's scrypt, which runs in libuv's
 * thread pool. Better Auth's default (@noble/hashes `scryptAsync`) computes in JavaScript on the
 * event loop, so a burst of sign-ins stalls every other request of the process.
 *
 * Parameters and format are exactly Better Auth 1.4.9's (better-auth/dist/crypto/password.mjs):
 * scrypt N=16384, r=16, p=1, 64-byte key over the NFKC-normalised password, salted with the
 * 32-character hex string of 16 random bytes (the string's bytes, not the decoded bytes), stored
 * as `salt:key` in hex. Hashes made by either implementation verify with the other.
 *
 * At most one scrypt per CPU core but one runs at a time: the thread pool (4 threads) would
 * otherwise take every core during a burst of sign-ins, and the event loop — every other request —
 * would wait for CPU (the `storm` benchmark on 2 cores: query p99 20× its idle p99 with 4 at once,
 * 1.3× with one; docs/decisions.md 20). Further sign-ins queue for their turn.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { availableParallelism } from "node:os";
import { watchQueue } from "service-auth/server";

const N = 16384;
const R = 16;
const P = 1;
const KEY_BYTES = 64;
/** scrypt needs a little over 128·N·r = 32 MiB, which is Node's default limit; 64 MiB as in Better Auth. */
const MAX_MEMORY = 128 * N * R * 2;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** Scrypt computations allowed at once: the cores but the event loop's, at least one. */
const MAX_CONCURRENT = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: (() => void)[] = [];
// The platform's metrics show how many password hashes wait for their turn.
watchQueue("scrypt", () => waiting.length);

/** Runs `task` when fewer than {@link MAX_CONCURRENT} tasks are running, in arrival order. */
async function inTurn<T>(task: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await task();
  } finally {
    // The slot passes straight to the next in line (`running` unchanged), or is freed.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function deriveKey(password: string, salt: string): Promise<Buffer> {
  return inTurn(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(
          password.normalize("NFKC"),
          salt,
          KEY_BYTES,
          { N, r: R, p: P, maxmem: MAX_MEMORY },
          (err, key) => (err ? reject(err) : resolve(key)),
        );
      }),
  );
}

/** Hashes a password as `saltHex:keyHex`, compatible with Better Auth's `hashPassword`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16).toString("hex");
  const key = await deriveKey(password, salt);
  return `${salt}:${key.toString("hex")}`;
}

/**
 * Whether `password` matches `hash` (made by {@link hashPassword} or Better Auth's default), in
 * constant time. A stored hash that is not `salt:hexkey` is corrupt data, not a wrong password.
 *
 * @throws Error "Invalid password hash" for a malformed `hash`, as Better Auth's verifier does.
 */
export async function verifyPassword({
  hash,
  password,
}: {
  hash: string;
  password: string;
}): Promise<boolean> {
  const [salt, key] = hash.split(":");
  if (!salt || !key || !HEX.test(key)) throw new Error("Invalid password hash");
  const expected = Buffer.from(key, "hex");
  const actual = await deriveKey(password, salt);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The `emailAndPassword.password` option of Better Auth with the hasher above.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { nativePasswordHasher } from "service-auth/auth";
 *
 * // `withAuthDefaults` sets it already; without the wrapper:
 * const auth = betterAuth({ emailAndPassword: { enabled: true, password: nativePasswordHasher } });
 * ```
 */
export const nativePasswordHasher = { hash: hashPassword, verify: verifyPassword };
