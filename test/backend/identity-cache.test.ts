import { describe, expect, it } from "vitest";
import { IdentityCache } from "../../src/backend/auth/identity-cache.ts";
import type { ReadSet } from "../../src/backend/db/read-write-sets.ts";

const identity = (sessionExpiresAt = Date.now() + 60_000) => ({
  subject: "u1",
  issuer: "iss",
  tokenIdentifier: "iss|u1",
  sessionExpiresAt,
});
const reads = (...ids: [string, string][]): ReadSet => ({
  ids: ids.map(([table, id]) => ({ table, id })),
  ranges: [],
});
const exp = () => Math.floor(Date.now() / 1000) + 600;
const write = (table: string, id: string) => ({ table, id, before: null, after: null });

describe("identity cache", () => {
  it("serves an entry until a commit writes a document it read", () => {
    const cache = new IdentityCache();
    cache.set("t", identity(), reads(["user", "u1"], ["session", "s1"]), exp(), 0);
    expect(cache.get("t")?.identity.subject).toBe("u1");
    cache.commit(1, [write("user", "u2")]);
    expect(cache.get("t")).toBeDefined();
    cache.commit(2, [write("session", "s1")]);
    expect(cache.get("t")).toBeUndefined();
  });

  it("never stores a result whose snapshot a later commit touched", () => {
    const cache = new IdentityCache();
    cache.commit(1, [write("session", "s1")]); // e.g. the revocation, committed while step 2 ran
    cache.set("t", identity(), reads(["session", "s1"]), exp(), 0);
    expect(cache.get("t")).toBeUndefined();
    cache.set("t", identity(), reads(["session", "s1"]), exp(), 1);
    expect(cache.get("t")).toBeDefined();
  });

  it("an unknown commit (another process) clears everything and blocks older snapshots", () => {
    const cache = new IdentityCache();
    cache.set("a", identity(), reads(["session", "s1"]), exp(), 0);
    cache.commit(1, null);
    expect(cache.get("a")).toBeUndefined();
    cache.set("b", identity(), reads(["session", "s2"]), exp(), 0);
    expect(cache.get("b")).toBeUndefined();
  });

  it("expires at the token's exp or the session's end, whichever is first", () => {
    const cache = new IdentityCache();
    const now = Date.now();
    cache.set("t", identity(now + 5_000), reads(["session", "s1"]), Math.floor(now / 1000) + 600, 0);
    expect(cache.get("t", now + 4_000)).toBeDefined();
    expect(cache.get("t", now + 5_000)).toBeUndefined();
    cache.set("u", identity(now + 600_000), reads(["session", "s1"]), Math.floor(now / 1000) + 10, 0);
    expect(cache.get("u", now + 11_000)).toBeUndefined();
  });

  it("does not cache identities that depend on range reads, and is bounded", () => {
    const cache = new IdentityCache(2);
    cache.set(
      "r",
      identity(),
      { ids: [], ranges: [{ table: "session", index: "token", range: {} }] },
      exp(),
      0,
    );
    expect(cache.get("r")).toBeUndefined();
    cache.set("a", identity(), reads(["session", "a"]), exp(), 0);
    cache.set("b", identity(), reads(["session", "b"]), exp(), 0);
    cache.set("c", identity(), reads(["session", "c"]), exp(), 0);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toBeUndefined();
  });

  it("assumes the worst when its commit history no longer reaches back to the snapshot", () => {
    const cache = new IdentityCache();
    for (let i = 1; i <= 300; i++) cache.commit(i, [write("other", String(i))]);
    cache.set("t", identity(), reads(["session", "s1"]), exp(), 10);
    expect(cache.get("t")).toBeUndefined();
    cache.set("t", identity(), reads(["session", "s1"]), exp(), 300);
    expect(cache.get("t")).toBeDefined();
  });
});
