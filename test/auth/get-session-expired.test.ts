/**
 * `GET /api/auth/get-session` on an expired session: Better Auth answers null and deletes the
 * session, but it leaves the expired session in `ctx.context.session`; the `backend` plugin's
 * after-hook must not mint a JWT (and set the `service-auth.jwt` cookie) for it.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(async () => {
  await app.close();
});

it("issues no JWT cookie for an expired session", async () => {
  const { browser, token, userId } = await app.signUp("expired-get-session@example.com");
  const sessionId = decodeJwt(token).sessionId as string;
  await app.backend.write(async (db) => {
    await db.patch(sessionId as any, { expiresAt: Date.now() - 1000 });
  });
  const res = await browser.get("/api/auth/get-session");
  expect(res.status).toBe(200);
  expect(res.body).toBeNull();
  // The session is gone...
  const sessions = await app.backend.read((db) =>
    db
      .query("session")
      .withIndex("userId", (q) => q.eq("userId", userId as any))
      .collect(),
  );
  expect(sessions).toEqual([]);
  // ...and no fresh token was minted for it.
  const minted = res.headers
    .getSetCookie()
    .filter((l) => /^service-auth\.jwt=[^;]+/.test(l) && !/max-age=0/i.test(l));
  expect(minted).toEqual([]);
});
