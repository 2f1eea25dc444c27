/**
 * The `backend` Better Auth plugin (requirements §2.6, §4.1, §4.3): claims of the issued JWT, the
 * `service-auth.jwt` cookie on every session-making response and its removal on sign-out, the
 * token and key-set endpoints, a custom payload and lifetime, and a non-default base path.
 */
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BANNED_MESSAGE } from "../../src/auth/identity.ts";
import { type AuthFixture, startAuthFixture } from "../helpers/auth-fixture.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { getJson } from "../helpers/http.ts";

let app: ExampleApp;
let n = 0;
const email = () => `plugin${++n}@example.com`;

beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(async () => {
  await app.close();
});

/** The `service-auth.jwt` line among `Set-Cookie` lines. */
const jwtCookie = (lines: string[]) => lines.find((l) => l.startsWith("service-auth.jwt="));

function expectJwtCookieAttributes(line: string | undefined, maxAge: number) {
  expect(line).toBeDefined();
  const attributes = line!
    .split(";")
    .slice(1)
    .map((a) => a.trim().toLowerCase());
  expect(attributes).toContain("httponly");
  expect(attributes).toContain("path=/");
  expect(attributes).toContain("samesite=lax");
  expect(attributes).toContain(`max-age=${maxAge}`);
}

describe("default claims (requirements §2.6)", () => {
  it("every user field except id and image, plus sessionId and iat; RS256 with the JWKS kid; iss, aud, exp", async () => {
    const address = email();
    const b = app.browser();
    const res = await b.post("/api/auth/sign-up/email", {
      email: address,
      password: PASSWORD,
      name: "Claire Claims",
      image: "https://example.com/claire.png",
    });
    expect(res.status).toBe(200);
    const token = b.jar.get("service-auth.jwt")!;
    const payload = decodeJwt(token) as Record<string, unknown>;
    const header = decodeProtectedHeader(token);
    const userId = res.body.user.id as string;

    const user = (await app.backend.read((db) => db.get("user", userId)))!;
    const session = (await app.backend.read((db) =>
      db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", userId))
        .first(),
    ))!;
    expect(user.image).toBe("https://example.com/claire.png");

    // Every stored user field except id and image is a claim, with the stored value.
    for (const [field, value] of Object.entries(user)) {
      if (field === "_id" || field === "_creationTime" || field === "image") continue;
      expect(payload[field], field).toEqual(value);
    }
    expect(payload).toMatchObject({
      name: "Claire Claims",
      email: address,
      emailVerified: false,
      username: `plugin${n}`,
    });
    expect(typeof payload.createdAt).toBe("number");
    expect(payload).not.toHaveProperty("id");
    expect(payload).not.toHaveProperty("image");

    expect(payload.sessionId).toBe(session._id);
    expect(payload.sub).toBe(userId);
    expect(Number.isInteger(payload.iat)).toBe(true);
    expect(Math.abs((payload.iat as number) - Date.now() / 1000)).toBeLessThan(60);
    expect(payload.exp).toBe((payload.iat as number) + 900);
    expect(payload.iss).toBe(app.url);
    expect(payload.aud).toBe("backend");

    expect(header.alg).toBe("RS256");
    const jwks = await getJson(`${app.url}/api/auth/backend/jwks`);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
  });
});

describe("the service-auth.jwt cookie", () => {
  it("is set on sign-up, sign-in and get-session (HttpOnly, Path=/, SameSite=Lax, Max-Age=900) and cleared on sign-out", async () => {
    const address = email();
    const b = app.browser();
    await b.post("/api/auth/sign-up/email", { email: address, password: PASSWORD, name: "Cookie" });
    expectJwtCookieAttributes(jwtCookie(b.jar.lastSetCookies), 900);

    const fresh = app.browser();
    const signIn = await fresh.post("/api/auth/sign-in/email", { email: address, password: PASSWORD });
    expect(signIn.status).toBe(200);
    const signInCookie = jwtCookie(fresh.jar.lastSetCookies);
    expectJwtCookieAttributes(signInCookie, 900);
    const signedInToken = fresh.jar.get("service-auth.jwt")!;
    expect((await app.call("query", "users:me", {}, signedInToken)).status).toBe(200);

    const session = await fresh.get("/api/auth/get-session");
    expect(session.status).toBe(200);
    expect(session.body.user.email).toBe(address);
    expectJwtCookieAttributes(jwtCookie(fresh.jar.lastSetCookies), 900);
    expect(decodeJwt(fresh.jar.get("service-auth.jwt")!).sessionId).toBe(session.body.session.id);
    // The token travels in the cookie only: Better Auth's own `set-auth-jwt` header stays off.
    expect(session.headers.get("set-auth-jwt")).toBeNull();

    const out = await fresh.post("/api/auth/sign-out", {});
    expect(out.status).toBe(200);
    const cleared = jwtCookie(fresh.jar.lastSetCookies);
    expect(cleared).toMatch(/^service-auth\.jwt=;/);
    expect(cleared).toMatch(/Max-Age=0/i);
    expect(fresh.jar.get("service-auth.jwt")).toBeUndefined();
  });

  /** Each session of `userId` changed (or deleted) directly in the database. */
  const changeSessions = (userId: string, change: "expire" | "delete") =>
    app.backend.write(async (db) => {
      const sessions = await db
        .query("session")
        .withIndex("userId", (q) => q.eq("userId", userId))
        .collect();
      for (const s of sessions) {
        if (change === "delete") await db.delete("session", s._id);
        else await db.patch("session", s._id, { expiresAt: Date.now() - 1000 });
      }
    });

  it.each(["expire", "delete"] as const)(
    "get-session of a session that ended meanwhile (%s) answers null and hands out no token",
    async (change) => {
      const { browser, userId } = await app.signUp(email());
      await changeSessions(userId, change);
      const res = await browser.get("/api/auth/get-session");
      expect(res.status).toBe(200);
      expect(res.body).toBeNull();
      // 1.4.9 ends the JWT cookie with the session cookie; a line that kept the session cookie
      // must still not set a new token.
      const line = jwtCookie(browser.jar.lastSetCookies);
      if (line !== undefined) expect(line).toMatch(/^service-auth\.jwt=;.*Max-Age=0/i);
    },
  );

  it("get-session without a session sets no JWT cookie", async () => {
    const b = app.browser();
    const res = await b.get("/api/auth/get-session");
    expect(res.status).toBe(200);
    expect(res.body).toBeNull();
    expect(jwtCookie(b.jar.lastSetCookies)).toBeUndefined();
  });
});

describe("GET /api/auth/backend/token", () => {
  it("returns {token} for a valid session and sets the cookie to it", async () => {
    const { browser, userId } = await app.signUp(email());
    const res = await browser.token();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["token"]);
    expect(decodeJwt(res.body.token!).sub).toBe(userId);
    expectJwtCookieAttributes(jwtCookie(browser.jar.lastSetCookies), 900);
    expect(browser.jar.get("service-auth.jwt")).toBe(res.body.token);
    expect((await app.call("query", "users:me", {}, res.body.token)).body.value._id).toBe(userId);
  });

  it("answers 401 without a session and sets no cookie", async () => {
    const b = app.browser();
    const res = await b.token();
    expect(res.status).toBe(401);
    expect(res.body?.token).toBeUndefined();
    expect(jwtCookie(b.jar.lastSetCookies)).toBeUndefined();
  });
});

describe("a banned user gets no JWT", () => {
  it("the token endpoint answers 403 ACCOUNT_BANNED and get-session sets no cookie until the ban ends", async () => {
    const { browser, userId } = await app.signUp(email());
    await app.backend.write((db) =>
      db.patch("user", userId, { banned: true, banExpires: Date.now() + 600_000 }),
    );
    const refused = await browser.token();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "ACCOUNT_BANNED", message: BANNED_MESSAGE });
    expect(jwtCookie(browser.jar.lastSetCookies)).toBeUndefined();
    const session = await browser.get("/api/auth/get-session");
    expect(session.status).toBe(200);
    expect(jwtCookie(browser.jar.lastSetCookies)).toBeUndefined();

    await app.backend.write((db) => db.patch("user", userId, { banExpires: Date.now() - 1 }));
    expect((await browser.token()).status).toBe(200);
    await browser.get("/api/auth/get-session");
    expectJwtCookieAttributes(jwtCookie(browser.jar.lastSetCookies), 900);
  });
});

describe("GET /api/auth/backend/jwks", () => {
  it("serves public keys only, with Cache-Control", async () => {
    const res = await getJson(`${app.url}/api/auth/backend/jwks`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60, stale-while-revalidate=60");
    expect(res.body.keys.length).toBeGreaterThan(0);
    for (const key of res.body.keys) {
      expect(key).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
      expect(typeof key.kid).toBe("string");
      expect(typeof key.n).toBe("string");
      for (const secret of ["d", "p", "q", "dp", "dq", "qi", "privateKey"])
        expect(key).not.toHaveProperty(secret);
    }
    expect(res.text).not.toMatch(/privateKey/i);
  });
});

describe("plugin options", () => {
  let fixture: AuthFixture;
  beforeAll(async () => {
    fixture = await startAuthFixture({
      basePath: "/auth",
      expirationSeconds: 60,
      // Leaves out sessionId and iat on purpose: the plugin must add both.
      definePayload: ({ user }) => ({ email: user.email, plan: "pro" }),
    });
  });
  afterAll(async () => {
    await fixture.close();
  });

  it("a custom definePayload still gets sessionId and iat; jwt.expirationSeconds sets exp and Max-Age", async () => {
    const { browser, response, token } = await fixture.signUp("custom@example.com");
    expect(response.status).toBe(200);
    const payload = decodeJwt(token!);
    expect(payload).toMatchObject({ email: "custom@example.com", plan: "pro", sub: response.body.user.id });
    expect(payload).not.toHaveProperty("name");
    expect(typeof payload.sessionId).toBe("string");
    const session = await fixture.service.backend.read((db) =>
      db.get("session", payload.sessionId as string),
    );
    expect(session?.userId).toBe(response.body.user.id);
    expect(Number.isInteger(payload.iat)).toBe(true);
    expect(payload.exp).toBe(payload.iat! + 60);
    expectJwtCookieAttributes(jwtCookie(browser.jar.lastSetCookies), 60);
  });

  it('options.basePath "/auth": endpoints move, the default prefix is gone, tokens verify', async () => {
    const { browser, response, token } = await fixture.signUp("basepath@example.com");
    expect(response.status).toBe(200);
    const me = await fixture.call("query", "probe:whoami", {}, token);
    expect(me.status).toBe(200);
    expect(me.body.value.userId).toBe(response.body.user.id);

    const refreshed = await browser.send("GET", "/auth/backend/token");
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.token).sub).toBe(response.body.user.id);

    const jwks = await getJson(`${fixture.url}/auth/backend/jwks`);
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(decodeProtectedHeader(token!).kid);

    expect((await browser.send("GET", "/api/auth/backend/token")).status).toBe(404);
    expect((await browser.send("GET", "/api/auth/get-session")).status).toBe(404);
  });
});

describe("POST /delete-user (fixture with user.deleteUser enabled)", () => {
  it("deletes the user and clears the JWT cookie with Max-Age=0; the old JWT gets 401", async () => {
    const fixture = await startAuthFixture();
    try {
      const { browser, response, token } = await fixture.signUp("delete-me@example.com");
      expect(response.status).toBe(200);
      expect((await fixture.call("query", "probe:whoami", {}, token)).status).toBe(200);

      const deleted = await browser.send("POST", "/api/auth/delete-user", { password: PASSWORD });
      expect(deleted.status).toBe(200);
      const cleared = jwtCookie(browser.jar.lastSetCookies);
      expect(cleared).toMatch(/^service-auth\.jwt=;/);
      expect(cleared).toMatch(/Max-Age=0/i);
      expect(browser.jar.get("service-auth.jwt")).toBeUndefined();

      const userId = response.body.user.id as string;
      expect(await fixture.service.backend.read((db) => db.get("user", userId))).toBeNull();
      const after = await fixture.call("query", "probe:whoami", {}, token);
      expect(after.status).toBe(401);
      expect(after.body.code).toBe("UNAUTHORIZED");
    } finally {
      await fixture.close();
    }
  });
});

describe("the server-only key endpoints (keys in the jwks table)", () => {
  it("getLatestJwks makes a key only when none exists and answers every stored key, oldest first; rotateKeys replaces them", async () => {
    const fixture = await startAuthFixture({ staticKeys: false });
    try {
      const { backend } = fixture.service;
      const run = async (fn: string) =>
        JSON.parse((await backend.runAction(`auth:${fn}`, {}, { allowInternal: true })) as string) as {
          id: string;
          createdAt: number;
        }[];
      const stored = () => backend.read((db) => db.query("jwks").collect());
      expect(await stored()).toEqual([]);
      const first = await run("getLatestJwks");
      expect(first.map((k) => k.id)).toEqual((await stored()).map((r) => r._id));
      expect(first).toHaveLength(1);
      expect(await run("getLatestJwks")).toEqual(first);

      // A second key, created before the first: it comes first.
      const [row] = await stored();
      const { _id, _creationTime, ...copy } = row as Record<string, unknown>;
      const older = await backend.write((db) =>
        db.insert("jwks", { ...copy, createdAt: Number(row.createdAt) - 1000 }),
      );
      expect((await run("getLatestJwks")).map((k) => k.id)).toEqual([older, first[0].id]);

      const rotated = await run("rotateKeys");
      expect(rotated).toHaveLength(1);
      expect([older, first[0].id]).not.toContain(rotated[0].id);
      expect((await stored()).map((r) => r._id)).toEqual([rotated[0].id]);
      const { token } = await fixture.signUp("after-rotation@example.com");
      expect(decodeProtectedHeader(token!).kid).toBe(rotated[0].id);
      // The key set the verifiers fetch: the public half, marked for signatures.
      const jwks = await getJson(`${fixture.url}/api/auth/backend/jwks`);
      expect(jwks.body.keys).toEqual([
        expect.objectContaining({ kid: rotated[0].id, use: "sig", kty: "RSA" }),
      ]);
      expect(jwks.body.keys[0]).not.toHaveProperty("d");
    } finally {
      await fixture.close();
    }
  });
});

describe("static keys (the JWKS variable)", () => {
  it("sign with the variable's key and serve its key set, whatever the jwks table holds", async () => {
    const fixture = await startAuthFixture();
    try {
      const { backend } = fixture.service;
      const variable = JSON.parse(backend.env.get("JWKS")!) as { id: string }[];
      // A newer key in the table (the same key material under another id): signing reading the
      // table, or the key-set endpoint serving it, would name it.
      const [row] = await backend.read((db) => db.query("jwks").collect());
      const { _id, _creationTime, ...copy } = row as Record<string, unknown>;
      const extra = await backend.write((db) =>
        db.insert("jwks", { ...copy, createdAt: Date.now() + 60_000 }),
      );
      const { token } = await fixture.signUp("static-keys@example.com");
      expect(decodeProtectedHeader(token!).kid).toBe(variable.at(-1)!.id);
      const jwks = await getJson(`${fixture.url}/api/auth/backend/jwks`);
      expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(variable.map((r) => r.id));
      expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).not.toContain(extra);
    } finally {
      await fixture.close();
    }
  });
});

describe("options.basePath with dynamic keys", () => {
  it("tokens verify through {SITE_URL}/auth/backend/jwks", async () => {
    const fixture = await startAuthFixture({ basePath: "/auth", staticKeys: false });
    try {
      expect(fixture.service.backend.env.get("JWKS")).toBeUndefined();
      const { response, token } = await fixture.signUp("dynamic-basepath@example.com");
      expect(response.status).toBe(200);
      const me = await fixture.call("query", "probe:whoami", {}, token);
      expect(me.status).toBe(200);
      expect(me.body.value.userId).toBe(response.body.user.id);
    } finally {
      await fixture.close();
    }
  });
});
