/**
 * The native (thread-pool) password hasher is interchangeable with Better Auth's default: each
 * verifies the other's hashes, including passwords that only match after NFKC normalisation.
 */
import { hashPassword as betterAuthHash, verifyPassword as betterAuthVerify } from "better-auth/crypto";
import { describe, expect, it } from "vitest";
import { hashPassword, nativePasswordHasher, verifyPassword } from "../../src/auth/password.ts";

// "ﬁ" (U+FB01) normalises to "fi" under NFKC; "é" is written precomposed and decomposed.
const PASSWORDS = ["correct horse battery staple", "ﬁsh-Caf\u00e9-密码-🔑", "x"];

describe("native password hasher", () => {
  it("writes Better Auth's format: 16-byte hex salt, 64-byte hex key", async () => {
    const hash = await hashPassword("pw-123456");
    expect(hash).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    expect(await hashPassword("pw-123456")).not.toBe(hash); // fresh salt each time
  });

  it.each(PASSWORDS)("Better Auth verifies a native hash of %j, and refuses a wrong password", async (pw) => {
    const hash = await hashPassword(pw);
    expect(await betterAuthVerify({ hash, password: pw })).toBe(true);
    expect(await betterAuthVerify({ hash, password: `${pw}!` })).toBe(false);
  });

  it.each(PASSWORDS)("verifies Better Auth's hash of %j, and refuses a wrong password", async (pw) => {
    const hash = await betterAuthHash(pw);
    expect(await verifyPassword({ hash, password: pw })).toBe(true);
    expect(await verifyPassword({ hash, password: `${pw}!` })).toBe(false);
  });

  it("normalises with NFKC like Better Auth", async () => {
    const hash = await betterAuthHash("ﬁle-Cafe\u0301");
    expect(await verifyPassword({ hash, password: "file-Caf\u00e9" })).toBe(true);
  });

  it("refuses a key of the wrong length and throws on a malformed stored hash", async () => {
    const [salt, key] = (await hashPassword("pw")).split(":");
    expect(await verifyPassword({ hash: `${salt}:${key?.slice(0, 64)}`, password: "pw" })).toBe(false);
    for (const hash of [
      "",
      "no-colon",
      `${salt}:`,
      `:${key}`,
      `${salt}:zz${key?.slice(2)}`,
      `${salt}:${key}zz`,
      `${salt}:abc`,
    ]) {
      await expect(verifyPassword({ hash, password: "pw" })).rejects.toThrow("Invalid password hash");
    }
  });

  it("hashes and verifies every one of more concurrent calls than scrypt may run at once", async () => {
    const passwords = Array.from({ length: 5 }, (_, i) => `concurrent-${i}`);
    const hashes = await Promise.all(passwords.map((pw) => hashPassword(pw)));
    const verdicts = await Promise.all(
      passwords.flatMap((pw, i) => [
        verifyPassword({ hash: hashes[i] as string, password: pw }),
        verifyPassword({ hash: hashes[(i + 1) % hashes.length] as string, password: pw }),
      ]),
    );
    expect(verdicts).toEqual(passwords.flatMap(() => [true, false]));
  });

  it("is the hasher `nativePasswordHasher` hands to Better Auth", async () => {
    const hash = await nativePasswordHasher.hash("handed-over");
    expect(await betterAuthVerify({ hash, password: "handed-over" })).toBe(true);
    expect(await nativePasswordHasher.verify({ hash, password: "handed-over" })).toBe(true);
    expect(await nativePasswordHasher.verify({ hash, password: "handed-over!" })).toBe(false);
  });
});
