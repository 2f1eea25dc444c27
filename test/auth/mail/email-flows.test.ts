/**
 * The example app's email flows over a real SMTP server (`smtp-server`): the tests read each
 * message as a mail client would and follow its link or type its code. Email verification on
 * sign-up, password reset, magic link and email OTP sign-in; and a mail server that is down (a
 * closed port) or refuses the message: 503 `MAIL_UNAVAILABLE` where the answer tells nothing
 * about accounts, a sign-up left undone, and a password reset answered as for an unknown address.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loggableLink } from "../../../src/auth/mail/index.ts";
import { freePort } from "../../helpers/browser.ts";
import { type Browser, type ExampleApp, PASSWORD, startExampleApp } from "../../helpers/example-app.ts";
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from "../../helpers/smtp.ts";

const FROM = "Example <no-reply@example.com>";
let app: ExampleApp;
let smtp: TestSmtpServer;
let n = 0;
const newEmail = (what: string) => `${what}${++n}@example.com`;

beforeAll(async () => {
  smtp = await startSmtpServer({ user: "mailer", pass: "mail secret" });
  app = await startExampleApp();
  await app.backend.env.set("SMTP_URL", smtp.url);
  await app.backend.env.set("MAIL_FROM", FROM);
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** The one link in a message's text, checked to point at this app. */
function linkIn(mail: ReceivedMail): URL {
  const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
  expect(links).toHaveLength(1);
  const url = new URL(links[0]!);
  expect(url.origin).toBe(app.url);
  return url;
}

/** GET a link like a browser following it from the mail, keeping `browser`'s cookies; no redirects followed. */
async function follow(browser: Browser, link: URL): Promise<Response> {
  const res = await fetch(link, { headers: { cookie: browser.jar.header() }, redirect: "manual" });
  browser.jar.absorb(res);
  return res;
}

const me = (token: string | undefined) => app.call("query", "users:me", {}, token);

describe("mail over SMTP", () => {
  it("sign-up sends a verification email from MAIL_FROM; its link verifies the address", async () => {
    const email = newEmail("verify");
    const { browser } = await app.signUp(email);
    const mail = await smtp.next(email);
    expect(mail.user).toBe("mailer");
    expect(mail.headerFrom).toBe(FROM);
    expect(mail.subject).toMatch(/Verify your email address/);
    expect((await browser.get("/api/auth/get-session")).body.user.emailVerified).toBe(false);

    const link = linkIn(mail);
    expect(link.pathname).toBe("/api/auth/verify-email");
    const res = await follow(browser, link);
    expect(res.status).toBe(302);
    expect((await browser.get("/api/auth/get-session")).body.user.emailVerified).toBe(true);
  });

  it("the development outbox's logged form of the verification link verifies too", async () => {
    const email = newEmail("logged");
    const { browser } = await app.signUp(email);
    const logged = new URL(loggableLink(linkIn(await smtp.next(email)).href));
    expect(logged.href).not.toMatch(/eyJ[\w-]*\.[\w-]*\./);
    expect((await follow(browser, logged)).status).toBe(302);
    expect((await browser.get("/api/auth/get-session")).body.user.emailVerified).toBe(true);
  });

  it("a tampered verification link is refused and verifies nothing", async () => {
    const email = newEmail("tamper");
    const { browser } = await app.signUp(email);
    const link = linkIn(await smtp.next(email));
    link.searchParams.set("token", `${link.searchParams.get("token")}x`);
    const res = await follow(browser, link);
    expect(res.status).toBeLessThan(500);
    expect((await browser.get("/api/auth/get-session")).body.user.emailVerified).toBe(false);
  });

  it("password reset: the emailed link leads to a token that sets a new password", async () => {
    const email = newEmail("reset");
    await app.signUp(email);
    const before = smtp.count(email);
    const browser = app.browser();
    const asked = await browser.post("/api/auth/request-password-reset", { email, redirectTo: "/reset" });
    expect(asked.status, asked.text).toBe(200);
    const mail = await smtp.next(email, before);
    expect(mail.subject).toMatch(/Reset your password/);

    const landing = await follow(browser, linkIn(mail));
    expect(landing.status).toBe(302);
    const redirected = new URL(landing.headers.get("location")!, app.url);
    expect(redirected.pathname).toBe("/reset");
    const token = redirected.searchParams.get("token")!;
    expect(token).toBeTruthy();

    const newPassword = "a brand new passphrase";
    const reset = await browser.post("/api/auth/reset-password", { newPassword, token });
    expect(reset.status, reset.text).toBe(200);
    expect((await app.browser().post("/api/auth/sign-in/email", { email, password: PASSWORD })).status).toBe(
      401,
    );
    const signIn = await app.browser().post("/api/auth/sign-in/email", { email, password: newPassword });
    expect(signIn.status).toBe(200);
    // The token is single-use.
    expect(
      (await browser.post("/api/auth/reset-password", { newPassword: "yet another one", token })).status,
    ).toBe(400);
  });

  it("magic link: following the emailed link signs in, sets the JWT cookie and a protected query answers", async () => {
    const email = newEmail("magic");
    const browser = app.browser();
    const sent = await browser.post("/api/auth/sign-in/magic-link", { email, callbackURL: "/" });
    expect(sent.status, sent.text).toBe(200);
    const mail = await smtp.next(email);
    expect(mail.subject).toMatch(/Your sign-in link/);
    expect(browser.jar.get("service-auth.jwt")).toBeUndefined();

    const res = await follow(browser, linkIn(mail));
    expect(res.status).toBe(302);
    const jwt = browser.jar.get("service-auth.jwt");
    expect(jwt).toBeTruthy();
    const answer = await me(jwt);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.value.email).toBe(email);
    // Used once: the same link again signs nobody in.
    const again = app.browser();
    await follow(again, linkIn(mail));
    expect(again.jar.get("service-auth.jwt")).toBeUndefined();
  });

  it("email OTP: the emailed code signs in; a wrong code does not", async () => {
    const email = newEmail("otp");
    const browser = app.browser();
    const sent = await browser.post("/api/auth/email-otp/send-verification-otp", { email, type: "sign-in" });
    expect(sent.status, sent.text).toBe(200);
    const mail = await smtp.next(email);
    expect(mail.subject).toMatch(/Your sign-in code/);
    const code = mail.text.match(/code is (\d+)/)?.[1];
    expect(code).toMatch(/^\d{6}$/);

    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const refused = await browser.post("/api/auth/sign-in/email-otp", { email, otp: wrong });
    expect(refused.status).toBe(400);
    expect(browser.jar.get("service-auth.jwt")).toBeUndefined();

    const signedIn = await browser.post("/api/auth/sign-in/email-otp", { email, otp: code });
    expect(signedIn.status, signedIn.text).toBe(200);
    const answer = await me(browser.jar.get("service-auth.jwt"));
    expect(answer.body.value.email).toBe(email);
  });

  it("a mail server that refuses connections: 503 MAIL_UNAVAILABLE, no stack trace", async () => {
    const closed = await freePort();
    await app.backend.env.set("SMTP_URL", `smtp://127.0.0.1:${closed}`);
    try {
      const res = await app.browser().post("/api/auth/sign-in/magic-link", { email: newEmail("down") });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: "MAIL_UNAVAILABLE" });
      expect(res.text).not.toMatch(/ECONNREFUSED|at .*\.ts/);
    } finally {
      await app.backend.env.set("SMTP_URL", smtp.url);
    }
  });
});

/** The mail server the app uses while `during` runs: a closed port, or one refusing every message. */
const failures: [string, () => Promise<{ url: string; close(): Promise<void> }>][] = [
  ["a closed port", async () => ({ url: `smtp://127.0.0.1:${await freePort()}`, close: async () => {} })],
  ["a server that refuses the message (550)", () => startSmtpServer({ refuse: true })],
];

async function withMailServer<T>(failing: { url: string }, during: () => Promise<T>): Promise<T> {
  await app.backend.env.set("SMTP_URL", failing.url);
  try {
    return await during();
  } finally {
    await app.backend.env.set("SMTP_URL", smtp.url);
  }
}

describe.each(failures)("mail the SMTP server does not take: %s", (_name, start) => {
  it("sign-up answers 503 MAIL_UNAVAILABLE and leaves nothing behind; the same sign-up works once mail does", async () => {
    const email = newEmail("signup-down");
    const failing = await start();
    try {
      const browser = app.browser();
      const refused = await withMailServer(failing, () =>
        browser.post("/api/auth/sign-up/email", { email, password: PASSWORD, name: "Down" }),
      );
      expect(refused.status, refused.text).toBe(503);
      expect(refused.body).toMatchObject({ code: "MAIL_UNAVAILABLE" });
      expect(refused.text).not.toMatch(/ECONNREFUSED|550|at .*\.ts/);
      expect(refused.headers.get("set-cookie")).toBeNull();
      // No user, account or session was kept: the password does not sign in ...
      const signIn = await app.browser().post("/api/auth/sign-in/email", { email, password: PASSWORD });
      expect(signIn.status, signIn.text).toBe(401);
    } finally {
      await failing.close();
    }
    // ... and the address is free: the same sign-up succeeds and sends its verification email.
    const { browser } = await app.signUp(email);
    expect((await smtp.next(email)).subject).toMatch(/Verify your email address/);
    expect((await browser.get("/api/auth/get-session")).body.user.email).toBe(email);
  });

  it("magic link and email OTP sign-in answer 503 MAIL_UNAVAILABLE (sent to any address, they tell nothing)", async () => {
    const failing = await start();
    try {
      await withMailServer(failing, async () => {
        const magic = await app.browser().post("/api/auth/sign-in/magic-link", { email: newEmail("down") });
        expect(magic.status, magic.text).toBe(503);
        expect(magic.body).toMatchObject({ code: "MAIL_UNAVAILABLE" });
        const otp = await app
          .browser()
          .post("/api/auth/email-otp/send-verification-otp", { email: newEmail("down"), type: "sign-in" });
        expect(otp.status, otp.text).toBe(503);
        expect(otp.body).toMatchObject({ code: "MAIL_UNAVAILABLE" });
      });
    } finally {
      await failing.close();
    }
  });

  it("password reset answers 200 for an account as for an unknown address (a 503 would reveal the account)", async () => {
    const email = newEmail("reset-down");
    await app.signUp(email);
    const failing = await start();
    try {
      await withMailServer(failing, async () => {
        const known = await app
          .browser()
          .post("/api/auth/request-password-reset", { email, redirectTo: "/reset" });
        const unknown = await app
          .browser()
          .post("/api/auth/request-password-reset", { email: newEmail("nobody"), redirectTo: "/reset" });
        expect(known.status, known.text).toBe(200);
        expect(unknown.status, unknown.text).toBe(200);
        expect(known.body).toEqual(unknown.body);
      });
    } finally {
      await failing.close();
    }
  });
});
