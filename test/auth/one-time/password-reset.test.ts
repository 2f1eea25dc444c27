/**
 * Password reset tokens under concurrency (issue 45): one token sent with 10 different new
 * passwords at once resets the password once, as one after another would: one 200, nine
 * INVALID_TOKEN, and the password that signs in is the one the 200 set. On SQLite and on
 * PostgreSQL with the requests spread over two instances.
 */
import { describe, expect, it } from "vitest";
import { engines, useApps } from "./engines.ts";
import { inParallel, PASSWORD, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
let n = 0;

describe.each(engines())("password reset under concurrency: $name", (engine) => {
  const apps = useApps(engine);

  it(
    "one token used 10 times at once resets the password once",
    async () => {
      const email = `reset-${++n}@example.com`;
      await apps().signUp(email);
      const asked = await apps()
        .browser()
        .send("POST", "/api/auth/request-password-reset", { email, redirectTo: "/reset" });
      expect(asked.status, asked.text).toBe(200);
      const { token } = apps()
        .outbox.resets.filter((r) => r.email === email)
        .at(-1)!;
      const passwords = Array.from({ length: 10 }, (_, i) => `new passphrase number ${i}`);
      const answers = await inParallel(10, (i) =>
        apps().browser(i).send("POST", "/api/auth/reset-password", { token, newPassword: passwords[i] }),
      );
      expect(statusCounts(answers)).toEqual({ 200: 1, 400: 9 });
      expect(answers.filter((a) => a.status === 400).every((a) => a.body.code === "INVALID_TOKEN")).toBe(
        true,
      );

      const winner = passwords[answers.findIndex((a) => a.status === 200)]!;
      const signIn = (password: string) =>
        apps().browser().send("POST", "/api/auth/sign-in/email", { email, password });
      expect((await signIn(winner)).status).toBe(200);
      for (const password of [PASSWORD, ...passwords.filter((p) => p !== winner)])
        expect((await signIn(password)).status).toBe(401);
    },
    TIMEOUT,
  );
});
