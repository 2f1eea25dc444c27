/**
 * Email OTP under concurrency (issue 45): parallel requests with one code give exactly the
 * sequential outcome. Wrong guesses sent at once each count (Better Auth allows 3), so the fourth
 * answer is TOO_MANY_ATTEMPTS and the right code is refused after it; the right code sent many
 * times at once is accepted once. Sign-in, email verification and password reset OTPs, on SQLite
 * and on PostgreSQL with the requests spread over two instances.
 */
import { describe, expect, it } from "vitest";
import { engines, useApps } from "./engines.ts";
import { inParallel, type OneTimeApps, OTP_ATTEMPTS, PASSWORD, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;
const newEmail = (what: string) => `otp-${what}-${++n}@example.com`;

/** A six-digit code other than `otp` (different for each `i`). */
const wrong = (otp: string, i: number) => String((Number(otp) + 1 + i) % 1_000_000).padStart(6, "0");

type OtpType = "sign-in" | "email-verification" | "forget-password";

/** Where each OTP type is sent to and checked, with the body of a check. */
const FLOWS: Record<
  OtpType,
  { path: string; body: (email: string, otp: string) => Record<string, unknown> }
> = {
  "sign-in": { path: "/api/auth/sign-in/email-otp", body: (email, otp) => ({ email, otp }) },
  "email-verification": { path: "/api/auth/email-otp/verify-email", body: (email, otp) => ({ email, otp }) },
  "forget-password": {
    path: "/api/auth/email-otp/reset-password",
    body: (email, otp) => ({ email, otp, password: `${PASSWORD} new` }),
  },
};

/** Asks for an OTP of `type` for `email` and returns the code the outbox got. */
async function sendOtp(apps: OneTimeApps, email: string, type: OtpType): Promise<string> {
  const res =
    type === "forget-password"
      ? await apps.browser().send("POST", "/api/auth/forget-password/email-otp", { email })
      : await apps.browser().send("POST", "/api/auth/email-otp/send-verification-otp", { email, type });
  expect(res.status, res.text).toBe(200);
  const sent = apps.outbox.otps.filter((o) => o.email === email && o.type === type).at(-1);
  expect(sent).toBeDefined();
  return sent!.otp;
}

/** Sends `otps` at once, spread over the instances; the answers in order. */
const check = (apps: OneTimeApps, type: OtpType, email: string, otps: string[]) =>
  inParallel(otps.length, (i) =>
    apps.browser(i).send("POST", FLOWS[type].path, FLOWS[type].body(email, otps[i]!)),
  );

describe.each(engines())("email OTP under concurrency: $name", (engine) => {
  const apps = useApps(engine);

  for (const type of Object.keys(FLOWS) as OtpType[]) {
    it(
      `${type}: ${OTP_ATTEMPTS} wrong guesses at once all count; the right code is then refused`,
      async () => {
        const email = newEmail(type);
        await apps().signUp(email);
        const otp = await sendOtp(apps(), email, type);
        const guesses = await check(
          apps(),
          type,
          email,
          Array.from({ length: OTP_ATTEMPTS }, (_, i) => wrong(otp, i)),
        );
        expect(guesses.map((g) => g.body?.code)).toEqual(Array(OTP_ATTEMPTS).fill("INVALID_OTP"));
        const row = (await apps().rows("verification")).find((r) => r.identifier === `${type}-otp-${email}`);
        expect(row?.value).toMatch(new RegExp(`:${OTP_ATTEMPTS}$`));

        const right = await apps().browser().send("POST", FLOWS[type].path, FLOWS[type].body(email, otp));
        expect(right.status).toBe(403);
        expect(right.body.code).toBe("TOO_MANY_ATTEMPTS");
      },
      TIMEOUT,
    );

    it(
      `${type}: the right code sent 10 times at once is accepted once`,
      async () => {
        const email = newEmail(`${type}-right`);
        await apps().signUp(email);
        const otp = await sendOtp(apps(), email, type);
        const answers = await check(apps(), type, email, Array(10).fill(otp));
        expect(statusCounts(answers)).toEqual({ 200: 1, 400: 9 });
        expect(answers.filter((a) => a.status === 400).every((a) => a.body.code === "INVALID_OTP")).toBe(
          true,
        );
      },
      TIMEOUT,
    );
  }

  it(
    "sign-in: 30 wrong guesses at once give one TOO_MANY_ATTEMPTS, and the right code afterwards signs nobody in",
    async () => {
      const email = newEmail("flood");
      const otp = await sendOtp(apps(), email, "sign-in");
      const guesses = await check(
        apps(),
        "sign-in",
        email,
        Array.from({ length: 30 }, (_, i) => wrong(otp, i)),
      );
      expect(statusCounts(guesses)).toEqual({ 400: 29, 403: 1 });
      const browser = apps().browser();
      const right = await browser.send("POST", FLOWS["sign-in"].path, { email, otp });
      expect(right.status).toBe(400);
      expect(right.body.code).toBe("INVALID_OTP");
      expect(browser.jar.get("service-auth.jwt")).toBeUndefined();
    },
    TIMEOUT,
  );

  it(
    "sign-in: the right code sent 20 times at once (a new address) makes one user and one session",
    async () => {
      const email = newEmail("sessions");
      const otp = await sendOtp(apps(), email, "sign-in");
      const answers = await check(apps(), "sign-in", email, Array(20).fill(otp));
      expect(statusCounts(answers)).toEqual({ 200: 1, 400: 19 });
      const users = (await apps().rows("user")).filter((u) => u.email === email);
      expect(users).toHaveLength(1);
      const sessions = (await apps().rows("session")).filter((s) => s.userId === users[0]!._id);
      expect(sessions).toHaveLength(1);
    },
    TIMEOUT,
  );
});
