/**
 * The JWT payload rules of requirements §2.6 as functions (test/auth/plugin.test.ts checks them in issued
 * tokens, where Better Auth 1.4.9 also sets `iat` itself, so these rules are only visible here):
 * which user fields become claims, and that `sessionId` and `iat` are always ours to set.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultPayload, payloadWithRequiredClaims } from "../../src/auth/plugins/backend/claims.ts";

const NOW = 1_800_000_123_456;
const user = {
  id: "u1",
  name: "Claire",
  image: "https://example.com/c.png",
  email: "c@example.com",
  emailVerified: false,
  banned: null,
  role: undefined,
  createdAt: new Date(NOW - 1000),
};
const session = { id: "s1", token: "secret-session-token" };

afterEach(() => {
  vi.useRealTimers();
});

describe("defaultPayload", () => {
  it("is every user field except id, image and absent ones, dates as ms since epoch", () => {
    const out = defaultPayload({ user, session });
    expect(Object.keys(out).sort()).toEqual(["banned", "createdAt", "email", "emailVerified", "name"]);
    expect(out).toEqual({
      name: "Claire",
      email: "c@example.com",
      emailVerified: false,
      banned: null,
      createdAt: NOW - 1000,
    });
  });
});

describe("payloadWithRequiredClaims", () => {
  it("adds sessionId and iat (seconds) to the default payload and never copies the session", async () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
    const out = await payloadWithRequiredClaims()({ user, session });
    expect(out).toMatchObject({ name: "Claire", sessionId: "s1", iat: Math.floor(NOW / 1000) });
    expect(JSON.stringify(out)).not.toContain("secret-session-token");
  });

  it("a custom payload keeps its numeric iat, loses a non-numeric one, and cannot name another session", async () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
    const custom = payloadWithRequiredClaims(() => ({
      plan: "pro",
      iat: 1_700_000_000,
      sessionId: "other",
      at: new Date(5),
    }));
    expect(await custom({ user, session })).toEqual({
      plan: "pro",
      iat: 1_700_000_000,
      sessionId: "s1",
      at: 5,
    });
    const stringIat = payloadWithRequiredClaims(async () => ({ iat: "1700000000" }));
    expect(await stringIat({ user, session })).toEqual({ iat: Math.floor(NOW / 1000), sessionId: "s1" });
    const nothing = payloadWithRequiredClaims(() => undefined as never);
    expect(await nothing({ user, session })).toEqual({ iat: Math.floor(NOW / 1000), sessionId: "s1" });
  });
});
