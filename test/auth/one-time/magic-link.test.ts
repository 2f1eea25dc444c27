/**
 * Magic links under concurrency (issue 45): one link followed by 20 requests at once signs in
 * once, exactly as when they come one after another: one session, one session cookie, and every
 * other request redirected with INVALID_TOKEN. On SQLite and on PostgreSQL with the requests
 * spread over two instances.
 */
import { describe, expect, it } from "vitest";
import { engines, useApps } from "./engines.ts";
import { inParallel, type OneTimeApps } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;

/** Asks for a magic link for `email`; the token the outbox got. */
async function sendLink(apps: OneTimeApps, email: string): Promise<string> {
  const res = await apps.browser().send("POST", "/api/auth/sign-in/magic-link", { email, callbackURL: "/" });
  expect(res.status, res.text).toBe(200);
  return apps.outbox.magicLinks.filter((l) => l.email === email).at(-1)!.token;
}

/** Follows the link on instance `i` without following the redirect: where it leads, and whether it signed in. */
async function follow(apps: OneTimeApps, token: string, i: number) {
  const url = apps.urls[i % apps.urls.length];
  const res = await fetch(
    `${url}/api/auth/magic-link/verify?token=${encodeURIComponent(token)}&callbackURL=/`,
    {
      redirect: "manual",
    },
  );
  const cookies = res.headers.getSetCookie();
  return {
    status: res.status,
    location: res.headers.get("location") ?? "",
    signedIn: cookies.some((c) => c.startsWith("service-auth.session_token=") && !c.includes("Max-Age=0")),
  };
}

describe.each(engines())("magic link under concurrency: $name", (engine) => {
  const apps = useApps(engine);

  it(
    "one link followed 20 times at once signs in once",
    async () => {
      const email = `magic-${++n}@example.com`;
      const { userId } = await apps().signUp(email);
      const token = await sendLink(apps(), email);
      const answers = await inParallel(20, (i) => follow(apps(), token, i));
      expect(answers.every((a) => a.status === 302)).toBe(true);
      expect(answers.filter((a) => a.signedIn)).toHaveLength(1);
      expect(answers.filter((a) => a.location.includes("error=INVALID_TOKEN"))).toHaveLength(19);
      // Verifying the address replaces the sign-up's session: the user has the link's one session.
      expect((await apps().rows("session")).filter((s) => s.userId === userId)).toHaveLength(1);
    },
    TIMEOUT,
  );

  it(
    "a link for a new address followed 20 times at once makes one user",
    async () => {
      const email = `magic-new-${++n}@example.com`;
      const token = await sendLink(apps(), email);
      const answers = await inParallel(20, (i) => follow(apps(), token, i));
      expect(answers.filter((a) => a.signedIn)).toHaveLength(1);
      expect((await apps().rows("user")).filter((u) => u.email === email)).toHaveLength(1);
    },
    TIMEOUT,
  );
});
