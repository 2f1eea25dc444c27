/**
 * GHSA-qq9h-g4jm-xgf3, pre-account hijacking: an attacker signs up with the victim's email and a
 * password (unverified); the victim later signs in by magic link or email OTP, which marks the
 * account verified, and the attacker's password and session go on working in the victim's
 * account. Mitigated: that first proof of the mailbox drops the password credential and every
 * earlier session (and with it every JWT naming one).
 */
import { emailOTP, magicLink } from "better-auth/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY } from "../../../src/auth/advisories/catalog.ts";
import { type AdvisoryFixture, itOnPinnedLine, PASSWORD, startAdvisoryFixture } from "./fixture.ts";

let app: AdvisoryFixture;
let n = 0;
const victimEmail = () => `hijack${++n}@example.com`;

beforeAll(async () => {
  app = await startAdvisoryFixture({
    plugins: (outbox) => [
      magicLink({
        sendMagicLink: ({ email, url, token }) => void outbox.magicLinks.push({ email, url, token }),
      }),
      emailOTP({
        sendVerificationOTP: async ({ email, otp, type }) => void outbox.otps.push({ email, otp, type }),
      }),
    ],
  });
});
afterAll(async () => {
  await app?.close();
});

/** The attacker's head start: an unverified account with their password, and its session's JWT. */
async function preRegister(email: string) {
  const { browser, response } = await app.signUp(email);
  expect(response.status).toBe(200);
  expect(response.body.user.emailVerified).toBe(false);
  const jwt = browser.jar.get("service-auth.jwt");
  expect((await app.whoami(jwt)).body.value).toBe(response.body.user.id);
  return { attacker: browser, jwt, userId: response.body.user.id as string };
}

/** The victim proves the mailbox, by magic link or by email OTP. */
async function victimSignsIn(email: string, by: "magic-link" | "email-otp") {
  const victim = app.browser();
  if (by === "magic-link") {
    expect((await victim.send("POST", "/api/auth/sign-in/magic-link", { email })).status).toBe(200);
    const { token } = app.outbox.magicLinks.filter((m) => m.email === email).at(-1)!;
    expect((await victim.send("GET", `/api/auth/magic-link/verify?token=${token}`)).status).toBe(200);
  } else {
    const sent = await victim.send("POST", "/api/auth/email-otp/send-verification-otp", {
      email,
      type: "sign-in",
    });
    expect(sent.status).toBe(200);
    const { otp } = app.outbox.otps.filter((m) => m.email === email).at(-1)!;
    expect((await victim.send("POST", "/api/auth/sign-in/email-otp", { email, otp })).status).toBe(200);
  }
  return victim;
}

/** What the attacker still holds afterwards. */
async function attackerHolds(email: string, pre: Awaited<ReturnType<typeof preRegister>>) {
  const password = await app.browser().send("POST", "/api/auth/sign-in/email", { email, password: PASSWORD });
  const session = await pre.attacker.send("GET", "/api/auth/get-session");
  const jwt = await app.whoami(pre.jwt);
  return {
    password: password.status === 200,
    session: session.body?.user?.id === pre.userId,
    jwt: jwt.body?.value === pre.userId,
  };
}

for (const by of ["magic-link", "email-otp"] as const) {
  describe(`${ADVISORY.preAccountHijacking} by ${by}`, () => {
    itOnPinnedLine(
      "reproduction: with the mitigation off, the attacker's password, session and JWT survive",
      async () => {
        await app.accept(ADVISORY.preAccountHijacking);
        try {
          const email = victimEmail();
          const pre = await preRegister(email);
          await victimSignsIn(email, by);
          expect(await attackerHolds(email, pre)).toEqual({ password: true, session: true, jwt: true });
        } finally {
          await app.accept();
        }
      },
    );

    it("mitigated: the first proof drops every account link and every earlier session", async () => {
      const email = victimEmail();
      const pre = await preRegister(email);
      // A provider linked before the proof (with `trustedProviders` or `allowDifferentEmails` the
      // link needs no proof of this email) is no more the owner's than the password: it goes too,
      // as in Better Auth's own fix (1.6.22 and later).
      const now = Date.now();
      await app.service.backend.write((db: any) =>
        db.insert("account", {
          userId: pre.userId,
          providerId: "github",
          accountId: `gh-${pre.userId}`,
          createdAt: now,
          updatedAt: now,
        }),
      );
      const victim = await victimSignsIn(email, by);
      expect(await attackerHolds(email, pre)).toEqual({ password: false, session: false, jwt: false });
      const accounts = (await app.rows("account")).filter((a) => a.userId === pre.userId);
      expect(accounts).toEqual([]);
      // The victim's own session, made after the proof, is the one left.
      const own = await victim.send("GET", "/api/auth/get-session");
      expect(own.body.user).toMatchObject({ id: pre.userId, emailVerified: true });
      expect((await app.whoami(victim.jar.get("service-auth.jwt"))).body.value).toBe(pre.userId);
    });
  });
}

describe("a verified user is left alone", () => {
  it("a magic-link sign-in of an already verified user keeps their other sessions", async () => {
    const email = victimEmail();
    const first = await victimSignsIn(email, "magic-link"); // creates the user, verified
    await victimSignsIn(email, "magic-link");
    expect((await first.send("GET", "/api/auth/get-session")).body?.user?.email).toBe(email);
  });
});
