/**
 * A refused reuse of a one-time credential is a security event (issue 45): the audit trail records
 * `credential.reused` for each request that presents a credential already consumed (a reset token,
 * a magic link, a one-time token, an email OTP), also when the consumers come at once; a credential
 * that never existed, or a wrong guess at a live one, records none. The tombstone that tells them
 * apart holds no token.
 */
import { describe, expect, it } from "vitest";
import { tombstoneOf } from "../../../src/auth/audit/reuse.ts";
import { ON_PINNED_LINE } from "../../helpers/better-auth-line.ts";
import { engines, useApps } from "./engines.ts";
import { inParallel, type OneTimeApps, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;

const reuses = async (apps: OneTimeApps, method: string) =>
  (await apps.rows("auditEvent")).filter(
    (e) => e.type === "credential.reused" && JSON.parse(e.details).method === method,
  );

async function resetToken(apps: OneTimeApps): Promise<{ email: string; token: string }> {
  const email = `reuse-${++n}@example.com`;
  await apps.signUp(email);
  const asked = await apps.browser().send("POST", "/api/auth/request-password-reset", { email });
  expect(asked.status, asked.text).toBe(200);
  return { email, token: apps.outbox.resets.filter((r) => r.email === email).at(-1)!.token };
}

describe.each(engines())("refused reuse in the audit trail: $name", (engine) => {
  const apps = useApps(engine);

  it(
    "a reset token used again is refused and recorded; the tombstone holds no token",
    async () => {
      const { token } = await resetToken(apps());
      const reset = (password: string) =>
        apps().browser().send("POST", "/api/auth/reset-password", { token, newPassword: password });
      const before = (await reuses(apps(), "/reset-password")).length;
      expect((await reset("first new passphrase")).status).toBe(200);
      expect((await reuses(apps(), "/reset-password")).length).toBe(before);
      const again = await reset("second new passphrase");
      expect(again.status).toBe(400);
      const events = await reuses(apps(), "/reset-password");
      expect(events.length - before).toBe(1);
      expect(JSON.parse(events.at(-1)!.details)).toMatchObject({ reason: "INVALID_TOKEN", status: 400 });
      const rows = JSON.stringify(await apps().rows("verification"));
      expect(rows).toContain(tombstoneOf(`reset-password:${token}`));
      expect(rows).not.toContain(token);
      expect(JSON.stringify(await apps().rows("auditEvent"))).not.toContain(token);
    },
    TIMEOUT,
  );

  it(
    "a reset token used 5 times at once: one reset, four refused reuses recorded",
    async () => {
      const { token } = await resetToken(apps());
      const before = (await reuses(apps(), "/reset-password")).length;
      const answers = await inParallel(5, (i) =>
        apps()
          .browser(i)
          .send("POST", "/api/auth/reset-password", { token, newPassword: `passphrase ${i} new` }),
      );
      expect(statusCounts(answers)).toEqual({ 200: 1, 400: 4 });
      expect((await reuses(apps(), "/reset-password")).length - before).toBe(4);
    },
    TIMEOUT,
  );

  it(
    "an email OTP and a one-time token used again are recorded; a made-up token is not",
    async () => {
      const email = `reuse-otp-${++n}@example.com`;
      await apps().signUp(email);
      await apps()
        .browser()
        .send("POST", "/api/auth/email-otp/send-verification-otp", { email, type: "sign-in" });
      const { otp } = apps()
        .outbox.otps.filter((o) => o.email === email)
        .at(-1)!;
      const browser = apps().browser();
      const signIn = () => browser.send("POST", "/api/auth/sign-in/email-otp", { email, otp });
      const otpBefore = (await reuses(apps(), "/sign-in/email-otp")).length;
      expect((await signIn()).status).toBe(200);
      expect((await signIn()).status).toBe(400);
      const otpEvents = await reuses(apps(), "/sign-in/email-otp");
      expect(otpEvents.length - otpBefore).toBe(1);
      expect(otpEvents.at(-1)!.email).toBe(email);

      // Signed in by the OTP above.
      const made = await browser.send("GET", "/api/auth/one-time-token/generate");
      expect(made.status, made.text).toBe(200);
      const verify = (token: string) =>
        apps().browser().send("POST", "/api/auth/one-time-token/verify", { token });
      const ottBefore = (await reuses(apps(), "/one-time-token/verify")).length;
      expect((await verify(made.body.token)).status).toBe(200);
      expect((await verify("never-issued-token")).status).toBe(400);
      expect((await reuses(apps(), "/one-time-token/verify")).length).toBe(ottBefore);
      expect((await verify(made.body.token)).status).toBe(400);
      // 1.7 stores and consumes one-time tokens its own way (`consumeOne`): recognised on 1.4.9.
      expect((await reuses(apps(), "/one-time-token/verify")).length - ottBefore).toBe(
        ON_PINNED_LINE ? 1 : 0,
      );
    },
    TIMEOUT,
  );
});
