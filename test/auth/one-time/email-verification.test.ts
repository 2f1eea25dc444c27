/**
 * Email verification links under concurrency (issue 45): `/verify-email`'s token is a signed JWT,
 * not a stored row, so only the user's `emailVerified` flag tells a first verification from a
 * later one. With `autoSignInAfterVerification`, one after another only the first verification
 * signs in (the later ones answer 200 with no session); 10 at once give exactly that: one new
 * session. On SQLite and on PostgreSQL with the requests spread over two instances.
 */
import { describe, expect, it } from "vitest";
import type { FixtureBrowser } from "../../helpers/browser.ts";
import { engines, useApps } from "./engines.ts";
import { type OneTimeApps, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
const SESSION_COOKIE = "service-auth.session_token";
let n = 0;

/** A new user with an unverified email, and the verification link's token sent to it. */
async function verificationToken(
  apps: OneTimeApps,
): Promise<{ email: string; userId: string; token: string }> {
  const email = `verify-${++n}@example.com`;
  const { userId } = await apps.signUp(email);
  const sent = await apps.browser().send("POST", "/api/auth/send-verification-email", { email });
  expect(sent.status, sent.text).toBe(200);
  const { token } = apps.outbox.verifications.filter((v) => v.email === email).at(-1)!;
  return { email, userId, token };
}

const sessionsOf = async (apps: OneTimeApps, userId: string) =>
  (await apps.rows("session")).filter((s) => s.userId === userId);

describe.each(engines())("email verification under concurrency: $name", (engine) => {
  const apps = useApps(engine, { autoSignInAfterVerification: true });

  it(
    "one after another: the first verification signs in, the next one does not",
    async () => {
      const { userId, token } = await verificationToken(apps());
      const before = (await sessionsOf(apps(), userId)).length;
      const first = apps().browser();
      const second = apps().browser(1);
      const path = `/api/auth/verify-email?token=${encodeURIComponent(token)}`;
      expect((await first.send("GET", path)).status).toBe(200);
      expect((await second.send("GET", path)).status).toBe(200);
      expect(first.jar.get(SESSION_COOKIE)).toBeDefined();
      expect(second.jar.get(SESSION_COOKIE)).toBeUndefined();
      expect((await sessionsOf(apps(), userId)).length - before).toBe(1);
    },
    TIMEOUT,
  );

  it(
    "one link verified 10 times at once: 10 × 200, one new session",
    async () => {
      const { userId, token } = await verificationToken(apps());
      const before = (await sessionsOf(apps(), userId)).length;
      const browsers: FixtureBrowser[] = Array.from({ length: 10 }, (_, i) => apps().browser(i));
      const answers = await Promise.all(
        browsers.map((b) => b.send("GET", `/api/auth/verify-email?token=${encodeURIComponent(token)}`)),
      );
      expect(statusCounts(answers)).toEqual({ 200: 10 });
      expect(browsers.filter((b) => b.jar.get(SESSION_COOKIE) !== undefined)).toHaveLength(1);
      expect((await sessionsOf(apps(), userId)).length - before).toBe(1);
      const user = (await apps().rows("user")).find((u) => u._id === userId)!;
      expect(user.emailVerified).toBe(true);
    },
    TIMEOUT,
  );
});
