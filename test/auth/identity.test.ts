/**
 * Step 2 of the auth integration (`resolveIdentity`, requirements §1.2) on a real backend: the session
 * named by the token must exist, belong to the token's user and be unexpired, and the user must
 * exist and not be banned (a ban with `banExpires` in the future still refuses; a lapsed one does
 * not). Each refusal is checked with its exact code, so a rule dropped from the resolver fails here.
 * The ban rule itself (`isBanned`, also applied by the `backend` plugin's token endpoint) is checked
 * as a function at the end.
 */
import { SignJWT } from "jose";
import { defineSchema, defineTable, v } from "service-auth/server";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { BANNED_MESSAGE, isBanned, resolveIdentity } from "../../src/auth/identity.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { startTestBackend } from "../helpers/service.ts";
import { AUDIENCE, ISSUER, makeKeys, signToken, type TestKeys } from "../sync/fixtures/auth.ts";

/** The two tables the resolver reads, with the fields it looks at. */
const schema = defineSchema({
  user: defineTable({
    name: v.string(),
    banned: v.optional(v.boolean()),
    banExpires: v.optional(v.number()),
  }),
  session: defineTable({ userId: v.string(), expiresAt: v.number() }),
});

let backend: BackendRuntime;
let keys: TestKeys;

beforeAll(async () => {
  keys = await makeKeys("k1");
  backend = await startTestBackend({
    schema,
    modules: {},
    auth: {
      providers: [{ issuer: ISSUER, audience: AUDIENCE, jwks: JSON.stringify({ keys: [keys.jwk] }) }],
      resolveIdentity,
    },
  });
});

afterAll(async () => {
  await backend?.close();
});

const HOUR = 3_600_000;

async function user(fields: { banned?: boolean; banExpires?: number } = {}): Promise<string> {
  return backend.write((db) => db.insert("user", { name: "u", ...fields }));
}

async function session(userId: string, expiresAt = Date.now() + HOUR): Promise<string> {
  return backend.write((db) => db.insert("session", { userId, expiresAt }));
}

/** A token of the test issuer with exactly `claims` (besides iss, aud, iat, exp). */
function tokenWith(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: keys.kid })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("15m")
    .sign(keys.privateKey);
}

async function refusal(token: string): Promise<{ code: string; message: string }> {
  return backend.authenticate(token).then(
    () => {
      throw new Error("expected authentication to be refused");
    },
    (e: { code: string; message: string }) => e,
  );
}

describe("resolveIdentity", () => {
  it("returns the user and session the token names, with the session's expiry", async () => {
    const userId = await user();
    const expiresAt = Date.now() + HOUR;
    const sessionId = await session(userId, expiresAt);
    const token = await signToken(keys, { sub: userId, sessionId });

    const { identity } = await backend.authenticate(token);
    expect(identity).toMatchObject({
      subject: userId,
      issuer: ISSUER,
      tokenIdentifier: `${ISSUER}|${userId}|${sessionId}`,
      userId,
      sessionId,
      sessionExpiresAt: expiresAt,
      // the verified claims are passed through
      aud: AUDIENCE,
      sub: userId,
    });
    // Built without a spread for speed (identityOfClaims), yet with the spread's keys in its order.
    const claims = JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString());
    const spread = {
      ...claims,
      subject: userId,
      issuer: ISSUER,
      tokenIdentifier: "",
      userId,
      sessionId,
      sessionExpiresAt: expiresAt,
    };
    expect(Object.keys(identity)).toEqual(Object.keys(spread));
  });

  it("refuses a token without sub or sessionId", async () => {
    const userId = await user();
    const sessionId = await session(userId);
    const noSession = await tokenWith({ sub: userId });
    expect(await refusal(noSession)).toMatchObject({
      code: "UNAUTHORIZED",
      message: "Token lacks sub or sessionId",
    });
    const noSub = await tokenWith({ sessionId });
    expect(await refusal(noSub)).toMatchObject({
      code: "UNAUTHORIZED",
      message: "Token lacks sub or sessionId",
    });
  });

  it("refuses a token whose user does not exist", async () => {
    const userId = await user();
    const sessionId = await session(userId);
    await backend.write((db) => db.delete(userId));
    const token = await signToken(keys, { sub: userId, sessionId });
    expect(await refusal(token)).toMatchObject({ code: "UNAUTHORIZED", message: "User not found" });
  });

  it("refuses a validly signed token whose session belongs to another user", async () => {
    const victim = await user();
    const victimSession = await session(victim);
    const attacker = await user();
    const token = await signToken(keys, { sub: attacker, sessionId: victimSession });
    expect(await refusal(token)).toMatchObject({ code: "UNAUTHORIZED", message: "Session not found" });
  });

  it("refuses a deleted or expired session", async () => {
    const userId = await user();
    const gone = await session(userId);
    await backend.write((db) => db.delete(gone));
    expect(await refusal(await signToken(keys, { sub: userId, sessionId: gone }))).toMatchObject({
      code: "UNAUTHORIZED",
      message: "Session not found",
    });
    const expired = await session(userId, Date.now() - 1);
    expect(await refusal(await signToken(keys, { sub: userId, sessionId: expired }))).toMatchObject({
      code: "UNAUTHORIZED",
      message: "Session expired",
    });
  });

  it("a session ends at the millisecond of its expiresAt", async () => {
    const userId = await user();
    const end = Date.now() + 60_000;
    const sessionId = await session(userId, end);
    const token = await signToken(keys, { sub: userId, sessionId });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(end - 1);
      await expect(backend.authenticate(token)).resolves.toMatchObject({ identity: { sessionId } });
      backend.forgetIdentities();
      vi.setSystemTime(end);
      expect(await refusal(token)).toMatchObject({ code: "UNAUTHORIZED", message: "Session expired" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses a banned user (403), also while banExpires is in the future, even with a live session", async () => {
    const forever = await user({ banned: true });
    const foreverToken = await signToken(keys, { sub: forever, sessionId: await session(forever) });
    expect(await refusal(foreverToken)).toMatchObject({ code: "ACCOUNT_BANNED", message: BANNED_MESSAGE });

    const untilTomorrow = await user({ banned: true, banExpires: Date.now() + 24 * HOUR });
    const token = await signToken(keys, { sub: untilTomorrow, sessionId: await session(untilTomorrow) });
    expect(await refusal(token)).toMatchObject({ code: "ACCOUNT_BANNED", message: BANNED_MESSAGE });
  });

  it("refuses a banned user whose sessions the ban deleted with 403, not 401", async () => {
    const userId = await user({ banned: true });
    const token = await signToken(keys, { sub: userId, sessionId: "deleted-by-the-ban" });
    expect(await refusal(token)).toMatchObject({ code: "ACCOUNT_BANNED" });
  });

  it("accepts a user whose ban has lapsed", async () => {
    const userId = await user({ banned: true, banExpires: Date.now() - 1 });
    const sessionId = await session(userId);
    const { identity } = await backend.authenticate(await signToken(keys, { sub: userId, sessionId }));
    expect(identity).toMatchObject({ userId, sessionId });
  });
});

describe("isBanned: the ban rule step 2 and the plugin apply", () => {
  const NOW = 1_800_000_000_000;

  it("not banned without `banned`, whatever banExpires says", () => {
    expect(isBanned({})).toBe(false);
    expect(isBanned({ banned: false, banExpires: NOW * 2 })).toBe(false);
    expect(isBanned({ banned: null })).toBe(false);
  });

  it("banned for good without banExpires (undefined or null)", () => {
    expect(isBanned({ banned: true })).toBe(true);
    expect(isBanned({ banned: true, banExpires: null })).toBe(true);
    expect(isBanned({ banned: true, banExpires: undefined })).toBe(true);
  });

  it("until banExpires, as a number or a Date; at banExpires the ban is over", () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    expect(isBanned({ banned: true, banExpires: NOW + 1 })).toBe(true);
    expect(isBanned({ banned: true, banExpires: NOW })).toBe(false);
    expect(isBanned({ banned: true, banExpires: NOW - 1 })).toBe(false);
    expect(isBanned({ banned: true, banExpires: new Date(NOW + 1) })).toBe(true);
    expect(isBanned({ banned: true, banExpires: new Date(NOW) })).toBe(false);
    expect(isBanned({ banned: true, banExpires: String(NOW + 1000) })).toBe(true);
    expect(isBanned({ banned: true, banExpires: 0 })).toBe(false);
  });

  it("the refusal's message", () => {
    expect(BANNED_MESSAGE).toBe("This account is banned. Contact support if you believe this is an error.");
  });
});
