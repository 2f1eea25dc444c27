/**
 * A refused reuse of a one-time credential is a security event (issue 45): the audit trail records
 * `credential.reused` for each request that presents a credential already consumed (a reset token,
 * a magic link, a one-time token, an email or phone OTP, a two-factor backup code, an organization
 * invitation, an API key whose uses are used up), also when the consumers come at once; a
 * credential that never existed, or a wrong guess at a live one, records none. The tombstone that
 * tells them apart holds no token, code or key.
 */
import { describe, expect, it } from "vitest";
import { tombstoneOf } from "../../../src/auth/audit/reuse.ts";
import type { FixtureBrowser } from "../../helpers/browser.ts";
import { engines, useApps } from "./engines.ts";
import { inParallel, type OneTimeApps, PASSWORD, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;

const reuses = async (apps: OneTimeApps, method: string) =>
  (await apps.rows("auditEvent")).filter(
    (e) => e.type === "credential.reused" && JSON.parse(e.details).method === method,
  );

/** Neither the verification table (tombstones) nor the audit trail holds `secret`. */
async function storedNowhere(apps: OneTimeApps, secret: string) {
  expect(JSON.stringify(await apps.rows("verification"))).not.toContain(secret);
  expect(JSON.stringify(await apps.rows("auditEvent"))).not.toContain(secret);
}

const patchUser = (apps: OneTimeApps, userId: string, fields: Record<string, unknown>) =>
  apps.services[0]!.backend.write(async (db: any) => db.patch("user", userId, fields));

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
      expect((await reuses(apps(), "/one-time-token/verify")).length - ottBefore).toBe(1);
    },
    TIMEOUT,
  );

  it(
    "a used backup code presented again is recorded, also from sign-ins at once; a wrong code is not",
    async () => {
      const method = "/two-factor/verify-backup-code";
      const email = `reuse-backup-${++n}@example.com`;
      const { browser, userId } = await apps().signUp(email);
      const enabled = await browser.send("POST", "/api/auth/two-factor/enable", { password: PASSWORD });
      expect(enabled.status, enabled.text).toBe(200);
      const codes = enabled.body.backupCodes as string[];
      // Two-factor on without a TOTP step: a sign-in then waits for a second factor.
      await patchUser(apps(), userId, { twoFactorEnabled: true });
      const signIn = async (): Promise<FixtureBrowser> => {
        const b = apps().browser();
        const res = await b.send("POST", "/api/auth/sign-in/email", { email, password: PASSWORD });
        expect(res.body?.twoFactorRedirect, res.text).toBe(true);
        return b;
      };
      const verify = (b: FixtureBrowser, code: string, i = 0) =>
        apps().browser(i).send("POST", `/api/auth${method}`, { code }, { cookie: b.jar.header() });
      const before = (await reuses(apps(), method)).length;

      // Used by the signed-in user, then presented by a new sign-in.
      expect((await verify(browser, codes[0]!)).status).toBe(200);
      expect((await verify(await signIn(), codes[0]!)).status).toBe(401);
      const events = await reuses(apps(), method);
      expect(events.length - before).toBe(1);
      expect(events.at(-1)!.targetId).toBe(userId);
      expect(JSON.parse(events.at(-1)!.details)).toMatchObject({
        reason: "INVALID_BACKUP_CODE",
        status: 401,
      });
      // A code that never was one: refused, no reuse.
      expect((await verify(await signIn(), "xxxxx-xxxxx")).status).toBe(401);
      expect((await reuses(apps(), method)).length - before).toBe(1);

      // One code from 5 sign-ins at once: one accepted, four refused reuses.
      const signIns: FixtureBrowser[] = [];
      for (let i = 0; i < 5; i++) signIns.push(await signIn());
      const answers = await inParallel(5, (i) => verify(signIns[i]!, codes[1]!, i));
      expect(statusCounts(answers)).toEqual({ 200: 1, 401: 4 });
      expect((await reuses(apps(), method)).length - before).toBe(5);
      for (const code of codes.slice(0, 2)) await storedNowhere(apps(), code);
    },
    TIMEOUT,
  );

  it(
    "an invitation accepted, then accepted or rejected again, is recorded; a made-up one is not",
    async () => {
      const { browser: owner } = await apps().signUp(`reuse-owner-${++n}@example.com`);
      const org = await owner.send("POST", "/api/auth/organization/create", {
        name: "Reuse",
        slug: `reuse-${n}`,
      });
      expect(org.status, org.text).toBe(200);
      const email = `reuse-invitee-${n}@example.com`;
      const { browser: invitee, userId } = await apps().signUp(email);
      // Only a verified address may take an invitation (advisories/invitations).
      await patchUser(apps(), userId, { emailVerified: true });
      const invited = await owner.send("POST", "/api/auth/organization/invite-member", {
        email,
        role: "member",
        organizationId: org.body.id,
      });
      expect(invited.status, invited.text).toBe(200);
      const use = (what: "accept" | "reject", invitationId: string, i = 0) =>
        apps().browser(i).send(
          "POST",
          `/api/auth/organization/${what}-invitation`,
          { invitationId },
          {
            cookie: invitee.jar.header(),
          },
        );
      const all = async () =>
        (await reuses(apps(), "/organization/accept-invitation")).length +
        (await reuses(apps(), "/organization/reject-invitation")).length;
      const before = await all();
      expect((await use("accept", "never-issued-invitation")).status).toBe(400);
      expect(await all()).toBe(before);

      expect((await use("accept", invited.body.id)).status).toBe(200);
      expect(await all()).toBe(before);
      expect((await use("accept", invited.body.id, 1)).status).toBe(400);
      expect((await use("reject", invited.body.id)).status).toBe(400);
      expect((await all()) - before).toBe(2);
      const events = await reuses(apps(), "/organization/accept-invitation");
      expect(events.at(-1)).toMatchObject({ actorId: userId, targetId: userId });
      expect(JSON.parse(events.at(-1)!.details)).toMatchObject({
        reason: "INVITATION_NOT_FOUND",
        status: 400,
      });
      await storedNowhere(apps(), invited.body.id);
    },
    TIMEOUT,
  );

  it(
    "an API key used beyond its uses is recorded for each refused request, also at once; the tombstone holds no key",
    async () => {
      const { browser, userId } = await apps().signUp(`reuse-key-${++n}@example.com`);
      const newKey = async (remaining: number) => {
        const created = await browser.send("POST", "/api/auth/api-key/create", { name: "limited" });
        expect(created.status, created.text).toBe(200);
        // `remaining` may only be set by the server (Better Auth): the row is set as an admin would.
        await apps().services[0]!.backend.write(async (db: any) =>
          db.patch("apikey", created.body.id, { remaining }),
        );
        return created.body.key as string;
      };
      const use = (key: string, i = 0) =>
        apps().browser(i).send("GET", "/api/auth/get-session", undefined, { "x-api-key": key });
      const keyReuses = async () =>
        (await apps().rows("auditEvent")).filter(
          (e) => e.type === "credential.reused" && e.targetId === userId,
        );
      const before = (await keyReuses()).length;

      const key = await newKey(1);
      expect((await use(key)).body?.user?.id).toBe(userId);
      expect((await keyReuses()).length).toBe(before);
      // Used up: refused (429, and the plugin deletes the key), then refused again; both recorded.
      const refused = await use(key);
      expect(refused.status).toBe(429);
      const again = await use(key, 1);
      expect(again.status).toBeGreaterThanOrEqual(400);
      expect(again.body?.user?.id).toBeUndefined();
      expect((await keyReuses()).length - before).toBe(2);
      expect(JSON.parse((await keyReuses()).at(-1)!.details)).toMatchObject({
        method: "/get-session",
        reason: "USAGE_EXCEEDED",
      });
      // A key never issued: refused, no reuse.
      expect((await use("x".repeat(64))).status).toBe(401);
      expect((await keyReuses()).length - before).toBe(2);

      // 2 uses left, 6 requests at once: 2 served, 4 refused reuses.
      const other = await newKey(2);
      const answers = await inParallel(6, (i) => use(other, i));
      expect(answers.filter((a) => a.status === 200 && a.body?.user?.id === userId)).toHaveLength(2);
      expect((await keyReuses()).length - before).toBe(6);
      for (const k of [key, other]) await storedNowhere(apps(), k);
    },
    TIMEOUT,
  );

  it(
    "a phone OTP used again is recorded; a wrong guess at a live one is not",
    async () => {
      const method = "/phone-number/verify";
      const phoneNumber = `+1555111${String(++n).padStart(4, "0")}`;
      const sent = await apps().browser().send("POST", "/api/auth/phone-number/send-otp", { phoneNumber });
      expect(sent.status, sent.text).toBe(200);
      const { code } = apps()
        .outbox.texts.filter((t) => t.phoneNumber === phoneNumber)
        .at(-1)!;
      const verify = (c: string) =>
        apps().browser().send("POST", `/api/auth${method}`, { phoneNumber, code: c });
      const before = (await reuses(apps(), method)).length;
      const wrong = String((Number(code) + 1) % 10 ** code.length).padStart(code.length, "0");
      expect((await verify(wrong)).status).toBe(400);
      expect((await reuses(apps(), method)).length).toBe(before);
      expect((await verify(code)).status).toBe(200);
      const again = await verify(code);
      expect(again.status).toBe(400);
      const events = await reuses(apps(), method);
      expect(events.length - before).toBe(1);
      expect(JSON.parse(events.at(-1)!.details)).toMatchObject({ reason: again.body.code, status: 400 });
    },
    TIMEOUT,
  );

  it(
    "a magic link followed again is recorded; a made-up link is not",
    async () => {
      const method = "/magic-link/verify";
      const email = `reuse-magic-${++n}@example.com`;
      await apps().signUp(email);
      const asked = await apps()
        .browser()
        .send("POST", "/api/auth/sign-in/magic-link", { email, callbackURL: "/" });
      expect(asked.status, asked.text).toBe(200);
      const { token } = apps()
        .outbox.magicLinks.filter((l) => l.email === email)
        .at(-1)!;
      // Both answers are redirects: into the session, or to the callback with the error.
      const follow = async (t: string) => {
        const res = await fetch(
          `${apps().urls[0]}/api/auth${method}?token=${encodeURIComponent(t)}&callbackURL=/`,
          { redirect: "manual" },
        );
        return res.headers.get("location") ?? "";
      };
      const before = (await reuses(apps(), method)).length;
      expect(await follow("never-issued-link")).toContain("error=INVALID_TOKEN");
      expect((await reuses(apps(), method)).length).toBe(before);
      expect(await follow(token)).not.toContain("error=");
      expect(await follow(token)).toContain("error=INVALID_TOKEN");
      expect((await reuses(apps(), method)).length - before).toBe(1);
      await storedNowhere(apps(), token);
    },
    TIMEOUT,
  );
});
