/**
 * Organization invitations, one-time tokens and API-key usage limits under concurrency (issue 45):
 * an invitation accepted 10 times at once makes one membership, a one-time token verified 10
 * times at once gives one session, and an API key with 3 uses left used 10 times at once answers
 * 3 times. On SQLite and on PostgreSQL with the requests spread over two instances.
 */
import { describe, expect, it } from "vitest";
import { engines, useApps } from "./engines.ts";
import { inParallel } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;

describe.each(engines())("invitations, one-time tokens and API keys under concurrency: $name", (engine) => {
  const apps = useApps(engine);

  it(
    "an invitation accepted 10 times at once makes one membership",
    async () => {
      const { browser: owner } = await apps().signUp(`owner-${++n}@example.com`);
      const org = await owner.send("POST", "/api/auth/organization/create", {
        name: "Acme",
        slug: `acme-${n}`,
      });
      expect(org.status, org.text).toBe(200);
      const email = `invitee-${n}@example.com`;
      const { browser: invitee, userId } = await apps().signUp(email);
      // Only a verified address may take an invitation (advisories/invitations).
      await apps().services[0]!.backend.write(async (db: any) =>
        db.patch("user", userId, { emailVerified: true }),
      );
      const invited = await owner.send("POST", "/api/auth/organization/invite-member", {
        email,
        role: "member",
        organizationId: org.body.id,
      });
      expect(invited.status, invited.text).toBe(200);
      const answers = await inParallel(10, (i) =>
        apps()
          .browser(i)
          .send(
            "POST",
            "/api/auth/organization/accept-invitation",
            { invitationId: invited.body.id },
            { cookie: invitee.jar.header() },
          ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 400)).toBe(true);
      const members = (await apps().rows("member")).filter(
        (m) => m.userId === userId && m.organizationId === org.body.id,
      );
      expect(members).toHaveLength(1);
    },
    TIMEOUT,
  );

  it(
    "a one-time token verified 10 times at once gives one session",
    async () => {
      const { browser, userId } = await apps().signUp(`ott-${++n}@example.com`);
      const made = await browser.send("GET", "/api/auth/one-time-token/generate");
      expect(made.status, made.text).toBe(200);
      const answers = await inParallel(10, (i) =>
        apps().browser(i).send("POST", "/api/auth/one-time-token/verify", { token: made.body.token }),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 200)[0]!.body.user.id).toBe(userId);
      expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 400)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "an API key with 3 uses left, used 10 times at once, answers 3 times",
    async () => {
      const { browser, userId } = await apps().signUp(`key-${++n}@example.com`);
      const created = await browser.send("POST", "/api/auth/api-key/create", { name: "limited" });
      expect(created.status, created.text).toBe(200);
      // `remaining` may only be set by the server (Better Auth): the row is set as an admin would.
      const keyId = created.body.id as string;
      await apps().services[0]!.backend.write(async (db: any) => {
        await db.patch("apikey", keyId, { remaining: 3 });
      });
      const answers = await inParallel(10, (i) =>
        apps().browser(i).send("GET", "/api/auth/get-session", undefined, { "x-api-key": created.body.key }),
      );
      const served = answers.filter((a) => a.status === 200 && a.body?.user?.id === userId);
      expect(served).toHaveLength(3);
      // Used up: one more request is not served either.
      const after = await apps().browser().send("GET", "/api/auth/get-session", undefined, {
        "x-api-key": created.body.key,
      });
      expect(after.body?.user?.id).toBeUndefined();
    },
    TIMEOUT,
  );
});
