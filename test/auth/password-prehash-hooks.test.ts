/**
 * The pre-hasher's own bookkeeping, driving its hooks as Better Auth does (before-hook, the
 * endpoint's `hash`, after-hook) with a counting hash: which passwords are hashed ahead (only those
 * Better Auth would hash), each ready hash handed out once, what the after-hook drops, and the bound
 * on ready hashes (a memory limit: a flood of sign-ups that never reach their `hash` keeps at most
 * 64). password-prehash.test.ts covers why it exists (the write lock is free while hashing).
 */
import { describe, expect, it } from "vitest";
import { prehashedPasswords } from "../../src/auth/password-prehash.ts";

const LIMITS = { minPasswordLength: 8, maxPasswordLength: 128 };

function setUp() {
  let made = 0;
  const { hash, plugin } = prehashedPasswords(async (password) => `hash${++made}:${password}`);
  const [before] = plugin.hooks!.before!;
  const [after] = plugin.hooks!.after!;
  const ctx = (body: unknown, path = "/sign-up/email") => ({
    path,
    body,
    context: { password: { config: LIMITS } },
  });
  return {
    hash,
    made: () => made,
    matcher: before.matcher,
    /** The before-hook of a sign-up with this body. */
    ahead: (body: unknown) => (before.handler as (c: unknown) => Promise<unknown>)(ctx(body)),
    /** The after-hook of a sign-up with this password. */
    done: (password: string) => (after.handler as (c: unknown) => Promise<unknown>)(ctx({ password })),
  };
}

describe("password pre-hashing", () => {
  it("hands a hash made ahead to the endpoint once; the next hash of that password is made anew", async () => {
    const h = setUp();
    await h.ahead({ password: "password-1" });
    expect(h.made()).toBe(1);
    expect(await h.hash("password-1")).toBe("hash1:password-1");
    expect(h.made()).toBe(1);
    expect(await h.hash("password-1")).toBe("hash2:password-1");
    expect(await h.hash("password-2")).toBe("hash3:password-2");
  });

  it("keeps one ready hash per request for a shared password, and the after-hook drops only its own", async () => {
    const h = setUp();
    await h.ahead({ password: "shared-pw" });
    await h.ahead({ password: "shared-pw" });
    await h.done("shared-pw"); // one request refused: its hash is dropped, the other's stays
    expect(await h.hash("shared-pw")).toMatch(/^hash[12]:shared-pw$/);
    expect(h.made()).toBe(2);
    expect(await h.hash("shared-pw")).toBe("hash3:shared-pw");
  });

  it("hashes ahead only passwords within Better Auth's length limits (it refuses the others unhashed)", async () => {
    const h = setUp();
    for (const body of [
      { password: "x".repeat(7) },
      { password: "x".repeat(129) },
      { password: 12345678 },
      {},
      undefined,
    ]) {
      await h.ahead(body);
    }
    expect(h.made()).toBe(0);
    await h.ahead({ password: "y".repeat(8) });
    await h.ahead({ password: "z".repeat(128) });
    expect(h.made()).toBe(2);
  });

  it("matches the sign-up endpoint only", () => {
    const h = setUp();
    expect(h.matcher({ path: "/sign-up/email" } as never)).toBe(true);
    expect(h.matcher({ path: "/sign-in/email" } as never)).toBe(false);
    expect(h.matcher({} as never)).toBe(false);
  });

  it("keeps at most 64 ready hashes, dropping the oldest", async () => {
    const h = setUp();
    for (let i = 0; i < 64; i++) await h.ahead({ password: `password-${i}` });
    expect(await h.hash("password-0")).toBe("hash1:password-0"); // all 64 kept
    await h.ahead({ password: "password-0" }); // 64 again, password-0 now the newest
    await h.ahead({ password: "password-64" }); // the 65th: password-1 is dropped
    expect(h.made()).toBe(66);
    expect(await h.hash("password-1")).toBe("hash67:password-1");
    expect(await h.hash("password-2")).toBe("hash3:password-2");
    expect(await h.hash("password-0")).toBe("hash65:password-0");
  });

  it("counts only hashes handed out: asking for passwords with none ready and emptied entries leave the bound at 64", async () => {
    const h = setUp();
    await h.ahead({ password: "emptied-pw" });
    await h.done("emptied-pw"); // taken: its entry must not linger as "the oldest"
    for (let i = 0; i < 10; i++) await h.hash(`never-ahead-${i}`); // none ready: nothing to count
    const base = h.made();
    for (let i = 0; i < 65; i++) await h.ahead({ password: `password-${i}` });
    expect(await h.hash("password-0")).toBe(`hash${base + 66}:password-0`); // dropped
    expect(await h.hash("password-1")).toBe(`hash${base + 2}:password-1`); // kept
  });
});
