/**
 * Attacks on step 1 through the real HTTP server (requirements §1.2, issue 3 item 5): forged, confused,
 * tampered, foreign, mis-addressed and oversize tokens all get 401 on `POST /api/query` without a
 * crash or a stack trace; and no secret ever reaches the server's logs.
 */
import { createPublicKey } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { spawnExampleServer } from "../helpers/example-server.ts";
import { getJson, postJson } from "../helpers/http.ts";
import {
  foreignKey,
  hs256WithPublicKey,
  signRs256,
  storedSigningKey,
  unsignedToken,
  withPayload,
} from "../helpers/jwt-forge.ts";
import { PROCESS_TEST_TIMEOUT, runCli } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

let app: ExampleApp;
let victim: { token: string; userId: string };
let other: { token: string; userId: string };
let claims: JWTPayload;
let kid: string;
let signingKey: Awaited<ReturnType<typeof storedSigningKey>>;

beforeAll(async () => {
  app = await startExampleApp();
  victim = await app.signUp("victim@example.com");
  other = await app.signUp("attacker@example.com");
  claims = decodeJwt(victim.token);
  kid = decodeProtectedHeader(victim.token).kid!;
  signingKey = await storedSigningKey(
    app.backend.env.get("JWKS")!,
    app.backend.env.get("SERVICE_AUTH_SECRET")!,
  );
});
afterAll(async () => {
  await app.close();
});

const me = (token: string) => app.call("query", "users:me", {}, token);

/** 401 UNAUTHORIZED with a JSON error body and nothing that looks like a stack trace. */
function expectRejected(res: Awaited<ReturnType<typeof me>>, message?: RegExp) {
  expect(res.status).toBe(401);
  expect(res.body).toMatchObject({ status: "error", code: "UNAUTHORIZED" });
  expect(res.text).not.toMatch(/\n\s+at |\.ts:\d+|node:internal|Error:/);
  if (message) expect(res.body.message).toMatch(message);
}

describe("forged tokens on POST /api/query", () => {
  it("the genuine token is accepted (control)", async () => {
    expect((await me(victim.token)).status).toBe(200);
    // The forging key really is the deployment's key: re-signing the same claims verifies.
    expect((await me(await signRs256(signingKey.privateKey, kid, claims))).status).toBe(200);
  });

  it("alg none", async () => {
    expectRejected(await me(unsignedToken(claims, kid)), /unsigned/i);
    expectRejected(await me(unsignedToken(claims)), /unsigned/i);
  });

  it("HS256 signed with the RSA public key (algorithm confusion)", async () => {
    const pem = createPublicKey({ key: signingKey.publicJwk as any, format: "jwk" })
      .export({ type: "spki", format: "pem" })
      .toString();
    expectRejected(await me(hs256WithPublicKey(claims, kid, pem)), /algorithm/i);
    expectRejected(
      await me(hs256WithPublicKey(claims, kid, JSON.stringify(signingKey.publicJwk))),
      /algorithm/i,
    );
  });

  it("tampered payload (sub and sessionId swapped to another user's)", async () => {
    const otherClaims = decodeJwt(other.token);
    const forged = withPayload(victim.token, {
      ...claims,
      sub: other.userId,
      sessionId: otherClaims.sessionId,
    });
    expectRejected(await me(forged), /Invalid token signature/);
    expectRejected(
      await me(withPayload(victim.token, { ...claims, role: "admin" })),
      /Invalid token signature/,
    );
  });

  it("signed with the deployment's key, but naming another user's session", async () => {
    const otherSessionId = decodeJwt(other.token).sessionId;
    expect(otherSessionId).not.toBe(claims.sessionId);
    const token = await signRs256(signingKey.privateKey, kid, { ...claims, sessionId: otherSessionId });
    expectRejected(await me(token), /Session not found/);
    // Both users and both sessions are intact: only the pairing is refused.
    expect((await me(victim.token)).status).toBe(200);
    expect((await me(other.token)).status).toBe(200);
  });

  it("signed by another key under the same kid", async () => {
    expectRejected(await me(await signRs256(await foreignKey(), kid, claims)), /Invalid token signature/);
  });

  it("signed by the right key but with the wrong iss or aud", async () => {
    expectRejected(
      await me(await signRs256(signingKey.privateKey, kid, { ...claims, iss: "https://evil.example" })),
      /issuer/i,
    );
    expectRejected(
      await me(await signRs256(signingKey.privateKey, kid, { ...claims, aud: "someone-else" })),
      /aud/i,
    );
    expectRejected(
      await me(await signRs256(signingKey.privateKey, kid, { ...claims, aud: undefined })),
      /aud/i,
    );
  });

  it("an unknown kid", async () => {
    expectRejected(
      await me(await signRs256(signingKey.privateKey, "no-such-kid", claims)),
      /Invalid token signature/,
    );
  });

  it("a malformed token", async () => {
    for (const bad of ["a.b", "....", "%%%.%%%.%%%", `${victim.token}.extra`]) expectRejected(await me(bad));
  });

  it("an oversize token (over 8 KB) is refused before parsing; a 16 KB one never reaches a function", async () => {
    const padding = "A".repeat(8 * 1024);
    const oversize = withPayload(victim.token, { ...claims, padding });
    expect(oversize.length).toBeGreaterThan(10 * 1024);
    expectRejected(await me(oversize), /too large/i);

    const huge = `${"A".repeat(16 * 1024)}.${"B".repeat(10)}.${"C".repeat(10)}`;
    const res = await fetch(`${app.url}/api/query`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${huge}` },
      body: JSON.stringify({ path: "users:me", args: {} }),
    });
    // Node refuses the headers (431) before any handler runs; either way it is not accepted.
    expect([401, 431]).toContain(res.status);
    expect(await res.text()).not.toMatch(/\n\s+at /);
    // The server is unharmed.
    expect((await getJson(`${app.url}/healthz`)).status).toBe(200);
    expect((await me(victim.token)).status).toBe(200);
  });

  it("a forged token is refused on a public function too, and by mutations and actions", async () => {
    const forged = await signRs256(await foreignKey(), kid, claims);
    expectRejected(await app.call("query", "users:count", {}, forged));
    expectRejected(await app.call("mutation", "messages:send", { body: "hi" }, forged));
    const action = await postJson(
      `${app.url}/api/action`,
      { path: "auth:getLatestJwks", args: {} },
      { authorization: `Bearer ${forged}` },
    );
    expect([401, 404]).toContain(action.status);
  });
});

describe("secrets never appear in logs", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("JWT, session token, password, SERVICE_AUTH_SECRET and private keys stay out of stderr/stdout", async () => {
    const databaseUrl = tempDatabaseFile();
    const server = await spawnExampleServer({ DATABASE_URL: databaseUrl });
    const password = "a-very-secret-password-4711";
    const jar = new Map<string, string>();
    const send = async (path: string, body?: unknown, extra: Record<string, string> = {}) => {
      const response = await fetch(`${server.url}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          origin: server.url,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "),
          ...extra,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const i = pair.indexOf("=");
        jar.set(pair.slice(0, i), pair.slice(i + 1));
      }
      return { status: response.status, body: await response.json().catch(() => undefined) };
    };
    let secrets: string[] = [];
    try {
      const signUp = await send("/api/auth/sign-up/email", {
        email: "logs@example.com",
        password,
        name: "Logs",
      });
      expect(signUp.status).toBe(200);
      const badSignIn = await send("/api/auth/sign-in/email", {
        email: "logs@example.com",
        password: `${password}-wrong`,
      });
      expect(badSignIn.status).toBe(401);
      const signIn = await send("/api/auth/sign-in/email", { email: "logs@example.com", password });
      expect(signIn.status).toBe(200);
      const sessionToken = signIn.body.token as string;
      const jwt = jar.get("service-auth.jwt")!;
      const sessionCookie = jar.get("service-auth.session_token")!;
      const refreshed = await send("/api/auth/backend/token");
      expect(refreshed.status).toBe(200);
      const auth = { authorization: `Bearer ${refreshed.body.token}` };
      expect((await send("/api/query", { path: "users:me", args: {} }, auth)).status).toBe(200);
      expect(
        (await send("/api/mutation", { path: "messages:send", args: { body: "hello" } }, auth)).status,
      ).toBe(200);
      // Failures log too; they must not echo what was presented.
      expect(
        (await send("/api/query", { path: "users:me", args: {} }, { authorization: `Bearer ${jwt}x` }))
          .status,
      ).toBe(401);
      expect((await send("/api/query", { path: "nope:nothing", args: { password } }, auth)).status).toBe(404);
      expect((await send("/api/auth/sign-out", {})).status).toBe(200);

      const secret = (
        await runCli(["env", "get", "SERVICE_AUTH_SECRET"], { env: { DATABASE_URL: databaseUrl } })
      ).stdout.trim();
      const jwks = (
        await runCli(["env", "get", "JWKS"], { env: { DATABASE_URL: databaseUrl } })
      ).stdout.trim();
      expect(secret.length).toBeGreaterThanOrEqual(32);
      const privateKeys = (JSON.parse(jwks) as { privateKey: string }[]).map((k) => k.privateKey);
      const { privateExponent } = await storedSigningKey(jwks, secret);
      secrets = [
        jwt,
        refreshed.body.token,
        sessionToken,
        sessionCookie,
        decodeURIComponent(sessionCookie),
        password,
        secret,
        jwks,
        ...privateKeys,
        privateExponent,
      ];
    } finally {
      await server.stop();
    }
    const logs = server.stderr() + server.stdout();
    expect(logs).toContain("listening on");
    expect(logs).toContain("generated");
    for (const s of secrets) {
      expect(s.length).toBeGreaterThan(8);
      expect(logs.includes(s), `log contains a secret (${s.slice(0, 6)}…)`).toBe(false);
      // Also not URL-encoded (cookies are).
      expect(logs.includes(encodeURIComponent(s))).toBe(false);
    }
  });
});
