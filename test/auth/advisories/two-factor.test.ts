/**
 * No backend JWT before the second factor (the shape of `@convex-dev/better-auth`'s
 * GHSA-4qvm-r4pr-v3wg): the password step of a two-factor sign-in makes a session that the
 * `twoFactor` plugin then replaces by a pending second factor. Without the guard the `backend`
 * plugin mints a JWT for it on the way out; with it, the first JWT comes once the second factor
 * made the user's session.
 */
import { twoFactor } from "better-auth/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY } from "../../../src/auth/advisories/catalog.ts";
import { type AdvisoryFixture, PASSWORD, startAdvisoryFixture } from "./fixture.ts";

let app: AdvisoryFixture;
let n = 0;

beforeAll(async () => {
  app = await startAdvisoryFixture({ plugins: () => [twoFactor({ skipVerificationOnEnable: true })] });
});
afterAll(async () => {
  await app?.close();
});

/** A user with two-factor enabled, and one of their backup codes. */
async function twoFactorUser() {
  const email = `second-factor${++n}@example.com`;
  const { browser, response } = await app.signUp(email);
  expect(response.status).toBe(200);
  const enabled = await browser.send("POST", "/api/auth/two-factor/enable", { password: PASSWORD });
  expect(enabled.status).toBe(200);
  return {
    email,
    userId: response.body.user.id as string,
    backupCode: enabled.body.backupCodes[0] as string,
  };
}

async function passwordStep(email: string) {
  const browser = app.browser();
  const res = await browser.send("POST", "/api/auth/sign-in/email", { email, password: PASSWORD });
  expect(res.status).toBe(200);
  expect(res.body.twoFactorRedirect).toBe(true);
  return { browser, jwtCookie: res.headers.getSetCookie().find((l) => l.startsWith("service-auth.jwt=")) };
}

describe(`no JWT before the second factor (${ADVISORY.jwtBeforeSecondFactor})`, () => {
  it("defence in depth: with the guard off, the session-cookie rule still leaves no usable JWT after the password step", async () => {
    // On 1.4.9 without either defence the password step answered with a signed JWT for the
    // session two-factor then replaced. With the advisory guard accepted (off), the backend
    // plugin's response rule (session cookie ended → JWT cookie ended) still holds.
    await app.accept(ADVISORY.jwtBeforeSecondFactor);
    try {
      const { email, userId } = await twoFactorUser();
      const { browser, jwtCookie } = await passwordStep(email);
      const value = jwtCookie?.split(";")[0].slice("service-auth.jwt=".length) ?? "";
      expect(value).toBe("");
      expect(browser.jar.get("service-auth.jwt") ?? "").toBe("");
      expect((await browser.send("GET", "/api/auth/backend/token")).status).toBe(401);
      expect(userId).toBeTruthy();
    } finally {
      await app.accept();
    }
  });

  it("guarded: no JWT cookie and no token endpoint after the password step; both after the second factor", async () => {
    const { email, userId, backupCode } = await twoFactorUser();
    const { browser, jwtCookie } = await passwordStep(email);
    expect(jwtCookie).toBeUndefined();
    expect(browser.jar.get("service-auth.jwt")).toBeUndefined();
    expect((await browser.send("GET", "/api/auth/backend/token")).status).toBe(401);

    const verified = await browser.send("POST", "/api/auth/two-factor/verify-backup-code", {
      code: backupCode,
    });
    expect(verified.status).toBe(200);
    const token = await browser.send("GET", "/api/auth/backend/token");
    expect(token.status).toBe(200);
    expect((await app.whoami(token.body.token)).body.value).toBe(userId);
  });

  it("a user without two-factor still gets the JWT with the password sign-in", async () => {
    const email = `one-factor${++n}@example.com`;
    const { response } = await app.signUp(email);
    const browser = app.browser();
    expect(
      (await browser.send("POST", "/api/auth/sign-in/email", { email, password: PASSWORD })).status,
    ).toBe(200);
    expect((await app.whoami(browser.jar.get("service-auth.jwt"))).body.value).toBe(response.body.user.id);
  });
});
