/**
 * Phone OTP under concurrency (issue 45): Better Auth's `phoneNumber` plugin, enabled by the
 * fixture. Parallel requests with one code give exactly the sequential outcome: wrong guesses sent
 * at once each count (3 allowed), so the fourth answer is TOO_MANY_ATTEMPTS and the right code is
 * refused after it; the right code sent many times at once is accepted once (one user, one
 * session); a password-reset code sent with 10 passwords at once resets once. On SQLite and on
 * PostgreSQL with the requests spread over two instances.
 */
import { describe, expect, it } from "vitest";
import { engines, useApps } from "./engines.ts";
import { inParallel, type OneTimeApps, OTP_ATTEMPTS, PASSWORD, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;
const newPhone = () => `+1555000${String(++n).padStart(4, "0")}`;

/** A code other than `code` (different for each `i`). */
const wrong = (code: string, i: number) =>
  String((Number(code) + 1 + i) % 10 ** code.length).padStart(code.length, "0");

type Flow = "verify" | "reset";

/** Where each kind of code is checked, with the body of a check. */
const FLOWS: Record<Flow, { path: string; body: (phoneNumber: string, code: string, i: number) => object }> =
  {
    verify: { path: "/api/auth/phone-number/verify", body: (phoneNumber, code) => ({ phoneNumber, code }) },
    reset: {
      path: "/api/auth/phone-number/reset-password",
      body: (phoneNumber, otp, i) => ({ phoneNumber, otp, newPassword: `${PASSWORD} ${i}` }),
    },
  };

/** The code of `type` the outbox last got for `phoneNumber`. */
function lastText(apps: OneTimeApps, phoneNumber: string, type: Flow): string {
  const sent = apps.outbox.texts.filter((t) => t.phoneNumber === phoneNumber && t.type === type).at(-1);
  expect(sent).toBeDefined();
  return sent!.code;
}

/** Texts a code to verify `phoneNumber` and returns it. */
async function sendCode(apps: OneTimeApps, phoneNumber: string): Promise<string> {
  const res = await apps.browser().send("POST", "/api/auth/phone-number/send-otp", { phoneNumber });
  expect(res.status, res.text).toBe(200);
  return lastText(apps, phoneNumber, "verify");
}

/**
 * A user with an email and password who added a verified `phoneNumber` to the account, and a
 * password-reset code texted to it.
 */
async function resetCode(apps: OneTimeApps, phoneNumber: string): Promise<string> {
  const { browser } = await apps.signUp(`phone-${n}@example.com`);
  const code = await sendCode(apps, phoneNumber);
  const added = await browser.send("POST", "/api/auth/phone-number/verify", {
    phoneNumber,
    code,
    updatePhoneNumber: true,
  });
  expect(added.status, added.text).toBe(200);
  const asked = await apps.browser().send("POST", "/api/auth/phone-number/request-password-reset", {
    phoneNumber,
  });
  expect(asked.status, asked.text).toBe(200);
  return lastText(apps, phoneNumber, "reset");
}

/** Sends `codes` to `flow` at once, spread over the instances; the answers in order. */
const check = (apps: OneTimeApps, flow: Flow, phoneNumber: string, codes: string[]) =>
  inParallel(codes.length, (i) =>
    apps.browser(i).send("POST", FLOWS[flow].path, FLOWS[flow].body(phoneNumber, codes[i]!, i)),
  );

const usersWith = async (apps: OneTimeApps, phoneNumber: string) =>
  (await apps.rows("user")).filter((u) => u.phoneNumber === phoneNumber);

describe.each(engines())("phone OTP under concurrency: $name", (engine) => {
  const apps = useApps(engine);

  for (const flow of Object.keys(FLOWS) as Flow[]) {
    it(
      `${flow}: ${OTP_ATTEMPTS} wrong guesses at once all count; the right code is then refused`,
      async () => {
        const phoneNumber = newPhone();
        const code =
          flow === "verify" ? await sendCode(apps(), phoneNumber) : await resetCode(apps(), phoneNumber);
        const guesses = await check(
          apps(),
          flow,
          phoneNumber,
          Array.from({ length: OTP_ATTEMPTS }, (_, i) => wrong(code, i)),
        );
        expect(guesses.map((g) => g.body?.code)).toEqual(Array(OTP_ATTEMPTS).fill("INVALID_OTP"));
        // 1.4.9 keys the row by the number (the reset code with a suffix), 1.7 with a prefix.
        const row = (await apps().rows("verification")).find(
          (r) => r.identifier.includes(phoneNumber) && r.value.startsWith(`${code}:`),
        );
        expect(row?.value).toBe(`${code}:${OTP_ATTEMPTS}`);

        const right = await apps()
          .browser()
          .send("POST", FLOWS[flow].path, FLOWS[flow].body(phoneNumber, code, 0));
        expect(right.status).toBe(403);
        expect(right.body.code).toBe("TOO_MANY_ATTEMPTS");
        if (flow === "verify") expect(await usersWith(apps(), phoneNumber)).toHaveLength(0);
      },
      TIMEOUT,
    );
  }

  it(
    "verify: 30 wrong guesses at once give one TOO_MANY_ATTEMPTS, and the right code afterwards signs nobody in",
    async () => {
      const phoneNumber = newPhone();
      const code = await sendCode(apps(), phoneNumber);
      const guesses = await check(
        apps(),
        "verify",
        phoneNumber,
        Array.from({ length: 30 }, (_, i) => wrong(code, i)),
      );
      expect(statusCounts(guesses)).toEqual({ 400: 29, 403: 1 });
      const browser = apps().browser();
      const right = await browser.send("POST", FLOWS.verify.path, { phoneNumber, code });
      expect(right.status).toBe(400);
      expect(right.body.code).toBe("OTP_NOT_FOUND");
      expect(browser.jar.get("service-auth.jwt")).toBeUndefined();
      expect(await usersWith(apps(), phoneNumber)).toHaveLength(0);
    },
    TIMEOUT,
  );

  it(
    "verify: the right code sent 20 times at once (a new number) makes one user and one session",
    async () => {
      const phoneNumber = newPhone();
      const code = await sendCode(apps(), phoneNumber);
      const answers = await check(apps(), "verify", phoneNumber, Array(20).fill(code));
      expect(statusCounts(answers)).toEqual({ 200: 1, 400: 19 });
      expect(answers.filter((a) => a.status === 400).every((a) => a.body.code === "OTP_NOT_FOUND")).toBe(
        true,
      );
      const users = await usersWith(apps(), phoneNumber);
      expect(users).toHaveLength(1);
      const sessions = (await apps().rows("session")).filter((s) => s.userId === users[0]!._id);
      expect(sessions).toHaveLength(1);
    },
    TIMEOUT,
  );

  it(
    "reset: the right code sent with 10 passwords at once resets once; that password signs in",
    async () => {
      const phoneNumber = newPhone();
      const code = await resetCode(apps(), phoneNumber);
      const answers = await check(apps(), "reset", phoneNumber, Array(10).fill(code));
      expect(statusCounts(answers)).toEqual({ 200: 1, 400: 9 });
      expect(answers.filter((a) => a.status === 400).every((a) => a.body.code === "OTP_NOT_FOUND")).toBe(
        true,
      );
      const winner = answers.findIndex((a) => a.status === 200);
      const signIn = (password: string) =>
        apps().browser().send("POST", "/api/auth/sign-in/phone-number", { phoneNumber, password });
      expect((await signIn(`${PASSWORD} ${winner}`)).status).toBe(200);
      for (let i = 0; i < 10; i++)
        if (i !== winner) expect((await signIn(`${PASSWORD} ${i}`)).status).toBe(401);
      expect((await signIn(PASSWORD)).status).toBe(401);
    },
    TIMEOUT,
  );
});
