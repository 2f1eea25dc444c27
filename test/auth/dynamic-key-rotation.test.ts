/**
 * Graceful key rotation in dynamic key mode (no `JWKS` variable: the verifier fetches the key set
 * from the server's own `/api/auth/backend/jwks`): right after `auth:rotateKeys({ overlap })` the
 * new key signs, and its token is accepted at once, without waiting out the 30 s a third-party
 * issuer's key set is refetched at most once in; the old key's token still works (the overlap).
 * Tokens with made-up key ids are refused, and the key set is fetched at most once a second for
 * them.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { internal } from "../../examples/app/app.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { foreignKey, signRs256 } from "../helpers/jwt-forge.ts";

const kidOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString()).kid;

let app: ExampleApp;
/** Requests for the key set, as the verifier makes them (counted by the server). */
let jwksRequests = 0;

beforeAll(async () => {
  app = await startExampleApp({ staticKeys: false });
  app.service.http.server.on("request", (req) => {
    if (req.url?.startsWith("/api/auth/backend/jwks")) jwksRequests++;
  });
});
afterAll(() => app?.close());

it("a token of the new key is accepted at once and the old key's token still verifies", async () => {
  expect(app.backend.env.get("JWKS")).toBeUndefined();
  const user = await app.signUp("dynamic-rotation@example.com");
  const oldKid = kidOf(user.token);
  // The verifier fetched the key set for this first token: the next unknown key comes within 30 s.
  expect((await app.call("query", "users:me", {}, user.token)).status).toBe(200);
  const fetchedBefore = jwksRequests;
  expect(fetchedBefore).toBeGreaterThanOrEqual(1);

  await app.backend.runAction(internal.auth.rotateKeys, { overlap: true }, { allowInternal: true });
  const fresh = (await user.browser.token()).body.token!;
  const newKid = kidOf(fresh);
  expect(newKid).not.toBe(oldKid);

  const res = await app.call("query", "users:me", {}, fresh);
  expect(res.status, res.text).toBe(200);
  expect(res.body.value).toMatchObject({ _id: user.userId });
  expect(jwksRequests).toBeGreaterThan(fetchedBefore);
  // The overlap: the old key is still published and its token still accepted.
  expect((await app.call("query", "users:me", {}, user.token)).status).toBe(200);
  const published = await fetch(`${app.url}/api/auth/backend/jwks`).then((r) => r.json());
  expect(published.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([oldKid, newKid].sort());
});

it("tokens with made-up key ids are refused, fetching the key set at most once a second", async () => {
  const key = await foreignKey();
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: app.url, aud: "backend", sub: "nobody", iat: now, exp: now + 600 };
  const tokens = await Promise.all(Array.from({ length: 40 }, () => signRs256(key, randomUUID(), payload)));
  const before = jwksRequests;
  const started = performance.now();
  const answers = await Promise.all(tokens.map((t) => app.call("query", "users:me", {}, t)));
  const elapsedMs = performance.now() - started;
  for (const res of answers) {
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "UNAUTHORIZED", message: "Invalid token signature" });
  }
  expect(jwksRequests - before).toBeLessThanOrEqual(2 + Math.floor(elapsedMs / 1000));
});
