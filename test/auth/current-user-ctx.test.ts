/**
 * The identity helpers' own rules (src/auth/current-user.ts), on hand-built ctx objects
 * (current-user.test.ts runs them through a server, where step 2 has already refused what these
 * cases build): an identity that is not a session's, a session document that has expired or vanished since step 2, the read through the
 * data functions in actions, and which forwarding headers are set.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  getAuthUserId,
  getAuthUserIdentity,
  getHeaders,
  getSession,
  type IdentityCtx,
} from "../../src/auth/current-user.ts";

const NOW = 1_800_000_000_000;
const claims = { subject: "u1", userId: "u1", sessionId: "s1", sessionExpiresAt: NOW + 60_000 };

function ctx(
  identity: object | null,
  extra: Partial<IdentityCtx> = {},
  token: string | null = "tok",
): IdentityCtx {
  return {
    auth: { getUserIdentity: async () => identity as never, getToken: () => token },
    ...extra,
  };
}

/** A `ctx.db` holding one session document (or none). */
function dbWith(doc: Record<string, unknown> | null) {
  const get = vi.fn(async () => doc);
  return { db: { get } as unknown as IdentityCtx["db"], get };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("getAuthUserIdentity / getAuthUserId", () => {
  it("is null for an identity without a session id (a token of another issuer)", async () => {
    const c = ctx({ subject: "u1", issuer: "https://other.example" });
    expect(await getAuthUserIdentity(c)).toBeNull();
    expect(await getAuthUserId(c)).toBeNull();
    expect(await getAuthUserIdentity(ctx({ subject: "u1", sessionId: 7 }))).toBeNull();
  });

  it("falls back to the subject when the identity carries no userId", async () => {
    expect(await getAuthUserIdentity(ctx({ subject: "u9", sessionId: "s9" }))).toEqual({
      userId: "u9",
      sessionId: "s9",
      subject: "u9",
    });
  });
});

describe("getSession", () => {
  it("is null for an identity without a session id, without reading anything", async () => {
    const { db, get } = dbWith({ _id: "s1", userId: "u1", expiresAt: NOW + 1 });
    expect(await getSession(ctx({ subject: "u1" }, { db }))).toBeNull();
    expect(get).not.toHaveBeenCalled();
  });

  it("reads the session document by the identity's session id", async () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
    const { db, get } = dbWith({ _id: "s1", userId: "u1", expiresAt: NOW + 1, activeOrganizationId: "o1" });
    expect(await getSession(ctx(claims, { db }))).toEqual({
      _id: "s1",
      userId: "u1",
      expiresAt: NOW + 1,
      activeOrganizationId: "o1",
    });
    expect(get).toHaveBeenCalledWith("session", "s1");
  });

  it("is null when the document is gone or expired since step 2 (expiresAt = now is expired)", async () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
    expect(await getSession(ctx(claims, dbWith(null)))).toBeNull();
    expect(await getSession(ctx(claims, dbWith({ _id: "s1", userId: "u1", expiresAt: NOW })))).toBeNull();
    expect(await getSession(ctx(claims, dbWith({ _id: "s1", userId: "u1", expiresAt: NOW - 1 })))).toBeNull();
    expect(await getSession(ctx(claims, dbWith({ _id: "s1", userId: "u1" })))).toBeNull();
  });

  it("in an action, reads through the findOne data function when it is given", async () => {
    vi.useFakeTimers({ now: NOW, toFake: ["Date"] });
    const findOne = { name: "auth:findOne" } as never;
    const runQuery = vi.fn(async () => ({ _id: "s1", userId: "u1", expiresAt: NOW + 5 }));
    const session = await getSession(ctx(claims, { runQuery: runQuery as never }), {
      authFunctions: { findOne },
    });
    expect(session).toEqual({ _id: "s1", userId: "u1", expiresAt: NOW + 5, activeOrganizationId: null });
    expect(runQuery).toHaveBeenCalledWith(findOne, {
      model: "session",
      where: [{ field: "_id", value: "s1" }],
    });

    runQuery.mockResolvedValueOnce({ _id: "s1", userId: "u1", expiresAt: NOW - 1 });
    expect(
      await getSession(ctx(claims, { runQuery: runQuery as never }), { authFunctions: { findOne } }),
    ).toBeNull();
  });

  it("without a database or data functions, builds the document from the claims", async () => {
    const runQuery = vi.fn();
    expect(
      await getSession(ctx({ ...claims, activeOrganizationId: "o2" }, { runQuery: runQuery as never })),
    ).toEqual({
      _id: "s1",
      userId: "u1",
      expiresAt: NOW + 60_000,
      activeOrganizationId: "o2",
    });
    expect(runQuery).not.toHaveBeenCalled();
  });
});

describe("getHeaders", () => {
  it("forwards the bearer token and the client address, and only what is there", async () => {
    const full = await getHeaders(ctx(claims, { meta: { clientIp: "203.0.113.7" } }));
    expect(Object.fromEntries(full)).toEqual({
      authorization: "Bearer tok",
      "x-forwarded-for": "203.0.113.7",
    });
    expect(Object.fromEntries(await getHeaders(ctx(null, {}, null)))).toEqual({});
    expect(Object.fromEntries(await getHeaders(ctx(null, { meta: {} }, null)))).toEqual({});
  });
});
