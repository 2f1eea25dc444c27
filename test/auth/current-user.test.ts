/**
 * Identity helpers of requirements §4.2 (src/auth/current-user.ts) through a real server:
 * `getAuthUserIdentity`, `getAuthUserId`, `getSession`, `getHeaders` in queries and actions, and
 * `getAuth(ctx)` (the direct adapter) in a mutation (writes, same transaction) and in a query (reads work, writes are refused).
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthFixture, startAuthFixture } from "../helpers/auth-fixture.ts";

let fixture: AuthFixture;
let token: string;
let userId: string;
let sessionId: string;

beforeAll(async () => {
  fixture = await startAuthFixture();
  const signUp = await fixture.signUp("helpers@example.com");
  expect(signUp.response.status).toBe(200);
  token = signUp.token!;
  userId = signUp.response.body.user.id;
  sessionId = decodeJwt(token).sessionId as string;
});
afterAll(async () => {
  await fixture.close();
});

describe("identity helpers", () => {
  for (const [kind, path] of [
    ["query", "probe:whoami"],
    ["action", "probe:whoamiAction"],
  ] as const) {
    it(`${kind}: identity, user id, session document and forwarding headers of the caller`, async () => {
      const res = await fixture.call(kind, path, {}, token);
      expect(res.status).toBe(200);
      const { identity, userId: id, session, headers } = res.body.value;
      expect(identity).toEqual({ userId, sessionId, subject: userId });
      expect(id).toBe(userId);

      const stored = (await fixture.service.backend.read((db) => db.get("session", sessionId)))!;
      expect(session).toMatchObject({
        _id: sessionId,
        userId,
        expiresAt: stored.expiresAt,
        activeOrganizationId: null,
      });
      expect(session.expiresAt).toBeGreaterThan(Date.now());

      expect(headers.authorization).toBe(`Bearer ${token}`);
      expect(headers["x-forwarded-for"]).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    });

    it(`${kind}: empty for an unauthenticated caller`, async () => {
      const res = await fixture.call(kind, path, {}, null);
      expect(res.status).toBe(200);
      const { identity, userId: id, session, headers } = res.body.value;
      expect(identity).toBeNull();
      expect(id).toBeNull();
      expect(session).toBeNull();
      expect(headers.authorization).toBeUndefined();
    });
  }

  it("getSession in a query returns the full stored session document", async () => {
    const res = await fixture.call("query", "probe:whoami", {}, token);
    const stored = (await fixture.service.backend.read((db) => db.get("session", sessionId)))!;
    expect(res.body.value.session).toEqual({ ...stored, activeOrganizationId: null });
  });
});

describe("getAuth(ctx): Better Auth over the direct adapter", () => {
  it("reads inside a query", async () => {
    const res = await fixture.call("query", "probe:findSelfViaGetAuth", {}, token);
    expect(res.status).toBe(200);
    expect(res.body.value).toEqual({ id: userId, email: "helpers@example.com" });
  });

  it("writes inside a mutation, visible to the same transaction", async () => {
    const res = await fixture.call("mutation", "probe:renameViaGetAuth", { name: "Renamed" }, token);
    expect(res.status).toBe(200);
    expect(res.body.value).toEqual({ name: "Renamed", stored: "Renamed" });
    expect((await fixture.service.backend.read((db) => db.get("user", userId)))?.name).toBe("Renamed");
  });

  it("a write attempted in a query is refused with a clear error and changes nothing", async () => {
    const before = (await fixture.service.backend.read((db) => db.get("user", userId)))!;
    const res = await fixture.call("query", "probe:renameInQuery", { name: "Sneaky" }, token);
    expect(res.status).toBe(500);
    expect(res.body.code).toBe("READ_ONLY");
    expect(res.body.message).toMatch(/query/i);
    expect(res.body.message).toMatch(/mutation/i);
    expect(res.text).not.toMatch(/\n\s+at /);
    const after = (await fixture.service.backend.read((db) => db.get("user", userId)))!;
    expect(after).toEqual(before);
  });
});
