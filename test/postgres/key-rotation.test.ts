/**
 * Graceful key rotation across instances (issue 28 item 5): two instances of the example app on one
 * PostgreSQL database; `auth:rotateKeys({ overlap })` through A, whose next token is signed by the
 * new key, sent at once to B. B is made late deterministically: it neither listens for
 * notifications nor polls (within the test), so it learns of A's commits only when it catches up
 * itself. A token whose key B does not know makes B catch up before refusing it: accepted, no 401.
 * Tokens with made-up key ids are still refused, and cost a bounded number of catch-ups.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internal } from "../../examples/app/app.ts";
import { keyStates } from "../../src/auth/keys/stored-jwks.ts";
import { metricsRegistry } from "../../src/backend/metrics/metrics.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { foreignKey, signRs256 } from "../helpers/jwt-forge.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";

const kidOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString()).kid;

/** Catch-ups made for tokens whose key was unknown, over every instance of this process. */
async function keyCatchUps(): Promise<number> {
  const metric = metricsRegistry.getSingleMetric("service_auth_key_catch_ups_total");
  const values = (await metric?.get())?.values ?? [];
  return values.reduce((sum, v) => sum + v.value, 0);
}

describe.skipIf(!postgresBinDir)("graceful key rotation across instances", { timeout: 180_000 }, () => {
  const server = usePostgres();
  let a: ExampleApp;
  let b: ExampleApp;
  let n = 0;
  const email = () => `rotation${++n}@example.com`;

  beforeAll(async () => {
    const databaseUrl = await server().createDatabase();
    a = await startExampleApp({ databaseUrl });
    // One issuer for both: a stored SITE_URL wins over each instance's default (its own address).
    await a.backend.env.set("SITE_URL", a.url);
    // B hears of A's commits only when it catches up itself: no NOTIFY, no poll in the test's time.
    b = await startExampleApp({
      databaseUrl,
      engine: new PostgresEngine({ connectionString: databaseUrl, notify: false, pollIntervalMs: 600_000 }),
    });
    expect(b.backend.env.get("SITE_URL")).toBe(a.url);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("a token of the new key reaches an instance that has not loaded the new JWKS: accepted, not 401", async () => {
    const user = await a.signUp(email());
    const oldKid = kidOf(user.token);
    expect((await b.call("query", "users:me", {}, user.token)).status).toBe(200);

    const jwks = (await a.backend.runAction(
      internal.auth.rotateKeys,
      { overlap: true },
      { allowInternal: true },
    )) as string;
    await a.backend.env.set("JWKS", jwks);
    const newKid = keyStates(jwks).find((s) => s.state === "signing")!.id;
    expect(newKid).not.toBe(oldKid);
    const fresh = (await user.browser.token()).body.token!;
    expect(kidOf(fresh)).toBe(newKid);
    // B has not heard of the rotation: its key set lacks the new key when the token arrives.
    expect(b.backend.env.get("JWKS")).not.toBe(jwks);

    const res = await b.call("query", "users:me", {}, fresh);
    expect(res.status, res.text).toBe(200);
    expect(res.body.value).toMatchObject({ _id: user.userId });
    expect(b.backend.env.get("JWKS")).toBe(jwks);
    // The overlap: the old key's token still works on both instances.
    expect((await b.call("query", "users:me", {}, user.token)).status).toBe(200);
    expect((await a.call("query", "users:me", {}, user.token)).status).toBe(200);
  });

  it("tokens with made-up key ids are refused with Invalid token signature, at a bounded number of catch-ups", async () => {
    const key = await foreignKey();
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: a.url, aud: "backend", sub: "nobody", iat: now, exp: now + 600 };
    const tokens = await Promise.all(Array.from({ length: 60 }, () => signRs256(key, randomUUID(), payload)));
    const before = await keyCatchUps();
    const started = performance.now();
    const answers = await Promise.all(tokens.map((t) => b.call("query", "users:me", {}, t)));
    const elapsedMs = performance.now() - started;
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: "UNAUTHORIZED", message: "Invalid token signature" });
    }
    const made = (await keyCatchUps()) - before;
    // Refused only after catching up; one round at a time, at least KEY_CATCH_UP_INTERVAL_MS
    // apart: 60 requests, however long they took, make no more than one round per interval (and
    // the one that was waiting when they began).
    expect(made).toBeGreaterThanOrEqual(1);
    expect(made).toBeLessThanOrEqual(2 + Math.floor(elapsedMs / 250));
    expect(made).toBeLessThan(tokens.length / 2);
  });
});
