import { describe, expect, it } from "vitest";
import { IdentityCache } from "../../src/backend/auth/identity-cache.ts";
import { Commits } from "../../src/backend/commits/commits.ts";
import { RECENT_COMMITS } from "../../src/backend/commits/history.ts";
import { Catalog } from "../../src/backend/db/catalog.ts";
import type { ReadSet } from "../../src/backend/db/read-write-sets.ts";
import { defineSchema } from "../../src/backend/schema.ts";

/** A cache and the commits core it hears (one process: no other instances to catch up with). */
function cacheAndCommits(maxEntries?: number) {
  const commits = new Commits(new Catalog(defineSchema({})), { onExternalCommit: () => () => {} });
  return { commits, cache: new IdentityCache(commits, maxEntries) };
}

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
    const { cache, commits } = cacheAndCommits();
    cache.set("t", identity(), reads(["user", "u1"], ["session", "s1"]), exp(), commits.stamp());
    expect(cache.get("t")?.identity.subject).toBe("u1");
    commits.publish([write("user", "u2")]);
    expect(cache.get("t")).toBeDefined();
    commits.publish([write("session", "s1")]);
    expect(cache.get("t")).toBeUndefined();
  });

  it("answers only for the exact token, also for tokens ending alike (the map key is the token's end)", () => {
    const { cache, commits } = cacheAndCommits();
    const end = "s".repeat(40);
    const [a, b] = [`header.payloadA.${end}`, `header.payloadB.${end}`];
    cache.set(a, identity(), reads(["session", "s1"]), exp(), commits.stamp());
    expect(cache.get(a)?.identity.subject).toBe("u1");
    expect(cache.get(b)).toBeUndefined();
    expect(cache.get(end)).toBeUndefined();
    // A token ending alike takes the place; the first is then looked up again, never mixed up.
    cache.set(b, { ...identity(), subject: "u2" }, reads(["session", "s2"]), exp(), commits.stamp());
    expect(cache.get(b)?.identity.subject).toBe("u2");
    expect(cache.get(a)).toBeUndefined();
    expect(cache.size).toBe(1);
    // Its document index follows: a write to the replaced entry's session drops nothing, its own does.
    commits.publish([write("session", "s1")]);
    expect(cache.get(b)).toBeDefined();
    commits.publish([write("session", "s2")]);
    expect(cache.get(b)).toBeUndefined();
  });

  it("never stores a result whose snapshot a later commit touched", () => {
    const { cache, commits } = cacheAndCommits();
    const before = commits.stamp();
    commits.publish([write("session", "s1")]); // e.g. the revocation, committed while step 2 ran
    cache.set("t", identity(), reads(["session", "s1"]), exp(), before);
    expect(cache.get("t")).toBeUndefined();
    cache.set("t", identity(), reads(["session", "s1"]), exp(), commits.stamp());
    expect(cache.get("t")).toBeDefined();
  });

  it("an unknown commit (another process) clears everything and blocks older snapshots", () => {
    const { cache, commits } = cacheAndCommits();
    const before = commits.stamp();
    cache.set("a", identity(), reads(["session", "s1"]), exp(), before);
    commits.publish([], true);
    expect(cache.get("a")).toBeUndefined();
    cache.set("b", identity(), reads(["session", "s2"]), exp(), before);
    expect(cache.get("b")).toBeUndefined();
  });

  it("a clear (new signing keys) blocks results stamped before it", () => {
    const { cache, commits } = cacheAndCommits();
    const before = commits.stamp();
    cache.clear();
    cache.set("t", identity(), reads(["session", "s1"]), exp(), before);
    expect(cache.get("t")).toBeUndefined();
    cache.set("t", identity(), reads(["session", "s1"]), exp(), commits.stamp());
    expect(cache.get("t")).toBeDefined();
  });

  it("expires at the token's exp or the session's end, whichever is first", () => {
    const { cache, commits } = cacheAndCommits();
    const now = Date.now();
    const stamp = commits.stamp();
    cache.set("t", identity(now + 5_000), reads(["session", "s1"]), Math.floor(now / 1000) + 600, stamp);
    expect(cache.get("t", now + 4_000)).toBeDefined();
    expect(cache.get("t", now + 5_000)).toBeUndefined();
    cache.set("u", identity(now + 600_000), reads(["session", "s1"]), Math.floor(now / 1000) + 10, stamp);
    expect(cache.get("u", now + 11_000)).toBeUndefined();
  });

  it("does not cache identities that depend on range reads, and is bounded", () => {
    const { cache, commits } = cacheAndCommits(2);
    const stamp = commits.stamp();
    cache.set(
      "r",
      identity(),
      { ids: [], ranges: [{ table: "session", index: "token", range: {} }] },
      exp(),
      stamp,
    );
    expect(cache.get("r")).toBeUndefined();
    cache.set("a", identity(), reads(["session", "a"]), exp(), stamp);
    cache.set("b", identity(), reads(["session", "b"]), exp(), stamp);
    cache.set("c", identity(), reads(["session", "c"]), exp(), stamp);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toBeUndefined();
  });

  it("assumes the worst when its commit history no longer reaches back to the snapshot", () => {
    const { cache, commits } = cacheAndCommits();
    for (let i = 1; i <= 10; i++) commits.publish([write("other", String(i))]);
    const old = commits.stamp();
    // Past the most the history keeps (twice RECENT_COMMITS: it forgets in batches).
    for (let i = 11; i <= 2 * RECENT_COMMITS + 20; i++) commits.publish([write("other", String(i))]);
    cache.set("t", identity(), reads(["session", "s1"]), exp(), old);
    expect(cache.get("t")).toBeUndefined();
    cache.set("t", identity(), reads(["session", "s1"]), exp(), commits.stamp());
    expect(cache.get("t")).toBeDefined();
  });
});
