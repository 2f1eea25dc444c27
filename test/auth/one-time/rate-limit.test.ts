/**
 * The rate limiter's own counts under concurrency (issue 45), on the example app with its limits as
 * shipped (`/sign-in/*`: 10 a minute per client): 30 wrong email OTP guesses at once from one
 * client give exactly the sequential outcome — the first 10 are served (3 INVALID_OTP, then
 * TOO_MANY_ATTEMPTS, then INVALID_OTP for the code that is gone) and 20 get 429. On SQLite, and
 * on PostgreSQL with the guesses spread over two instances sharing the counts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../../helpers/example-app.ts";
import { postgresBinDir, startPostgres, type TestPostgres } from "../../helpers/postgres.ts";
import { inParallel, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;

let pg: TestPostgres | undefined;
const setups: [string, () => Promise<ExampleApp[]>][] = [["SQLite", async () => [await startExampleApp()]]];
if (postgresBinDir)
  setups.push([
    "PostgreSQL, two instances",
    async () => {
      pg ??= await startPostgres();
      const databaseUrl = await pg.createDatabase();
      const first = await startExampleApp({ databaseUrl });
      return [first, await startExampleApp({ databaseUrl })];
    },
  ]);
afterAll(async () => {
  await pg?.stop();
});

describe.each(setups)("rate limits as shipped under concurrency: %s", (_name, start) => {
  it(
    "30 wrong OTP guesses at once: 10 served as one after another would be, 20 refused with 429",
    async () => {
      const apps = await start();
      try {
        const [first] = apps;
        const email = "rate-limited@example.com";
        const sent = await first!
          .browser()
          .post("/api/auth/email-otp/send-verification-otp", { email, type: "sign-in" });
        expect(sent.status, sent.text).toBe(200);
        const row: any = await first!.backend.read((db: any) =>
          db
            .query("verification")
            .withIndex("identifier", (q: any) => q.eq("identifier", `sign-in-otp-${email}`))
            .first(),
        );
        const otp = String(row.value).split(":")[0]!;
        const wrong = (i: number) => String((Number(otp) + 1 + i) % 1_000_000).padStart(otp.length, "0");
        const answers = await inParallel(30, (i) =>
          apps[i % apps.length]!.browser().post("/api/auth/sign-in/email-otp", { email, otp: wrong(i) }),
        );
        expect(statusCounts(answers)).toEqual({ 400: 9, 403: 1, 429: 20 });
        expect(answers.filter((a) => a.status === 403)[0]!.body.code).toBe("TOO_MANY_ATTEMPTS");
      } finally {
        for (const app of apps) await app.close();
      }
    },
    TIMEOUT,
  );

  it(
    "password and OTP sign-ins at once from one client share the count; none waits for the other",
    async () => {
      const apps = await start();
      try {
        const email = "mixed@example.com";
        await apps[0]!.signUp(email);
        const answers = await inParallel(20, (i) => {
          const browser = apps[i % apps.length]!.browser();
          return i % 2 === 0
            ? browser.post("/api/auth/sign-in/email", { email, password: "not the password" })
            : browser.post("/api/auth/sign-in/email-otp", { email, otp: "000000" });
        });
        // Every request answered, none with a database timeout (503) or another 5xx.
        expect(answers.filter((a) => a.status >= 500)).toEqual([]);
        expect(statusCounts(answers)[429]).toBeGreaterThan(0);
      } finally {
        for (const app of apps) await app.close();
      }
    },
    TIMEOUT,
  );
});
