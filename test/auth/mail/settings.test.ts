/**
 * The mail setting: SMTP when `SMTP_URL` is set (and `MAIL_FROM` with it), the development outbox
 * without it (its log line shows the link or code, a JWT-bearing link included, but not the
 * recipient), and no outbox in production. Errors name the variable, never its value.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { devOutbox, loggableLink, MailSettingsError, mailSenderOf } from "../../../src/auth/mail/index.ts";
import { startSmtpServer } from "../../helpers/smtp.ts";

const envOf = (values: Record<string, string>) => ({ get: (name: string) => values[name] });

describe("mailSenderOf", () => {
  it("production without SMTP_URL is refused, naming the variable", () => {
    expect(() => mailSenderOf(envOf({}), { production: true })).toThrow(MailSettingsError);
    expect(() => mailSenderOf(envOf({}), { production: true })).toThrow(/SMTP_URL is not set/);
  });

  it("development without SMTP_URL gets the outbox", () => {
    expect(mailSenderOf(envOf({}), { production: false }).kind).toBe("dev-outbox");
  });

  it("a malformed or non-SMTP URL is refused without echoing it (it may carry a password)", () => {
    for (const url of ["not a url :: hunter2", "https://user:hunter2@mail.example.com"]) {
      let error: unknown;
      try {
        mailSenderOf(envOf({ SMTP_URL: url, MAIL_FROM: "a@example.com" }), { production: true });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MailSettingsError);
      expect((error as Error).message).toMatch(/SMTP_URL/);
      expect((error as Error).message).not.toContain("hunter2");
    }
  });

  it("SMTP_URL without MAIL_FROM is refused", () => {
    expect(() => mailSenderOf(envOf({ SMTP_URL: "smtp://127.0.0.1:25" }), { production: true })).toThrow(
      /MAIL_FROM must be set/,
    );
  });

  it("SMTP_URL and MAIL_FROM send through SMTP, in production too; one transport per setting", async () => {
    const smtp = await startSmtpServer();
    try {
      const env = envOf({ SMTP_URL: smtp.url, MAIL_FROM: "Sender <from@example.com>" });
      const sender = mailSenderOf(env, { production: true });
      expect(sender.kind).toBe("smtp");
      expect(mailSenderOf(env, { production: true })).toBe(sender);
      await sender.send({ to: "someone@example.com", subject: "Hello", text: "A body\n" });
      const mail = await smtp.next("someone@example.com");
      expect(mail).toMatchObject({
        subject: "Hello",
        headerFrom: "Sender <from@example.com>",
        text: "A body\n",
      });
    } finally {
      await smtp.close();
    }
  });
});

describe("development outbox", () => {
  let lines: string[];
  let level: string | undefined;
  beforeEach(() => {
    lines = [];
    level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "info";
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: any) => {
      lines.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    if (level === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = level;
  });

  it("logs a verification link whose JWT survives the log redaction, and not the recipient", async () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJlbWFpbCI6ImFAYi5jIn0.c2lnbmF0dXJl";
    const link = `http://127.0.0.1:3000/api/auth/verify-email?token=${jwt}&callbackURL=/`;
    await devOutbox().send({ to: "person@example.com", subject: "Verify", text: link, link });
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(line.msg).toContain("Verify");
    expect(lines[0]).not.toContain("person@example.com");
    const logged = new URL(line.link);
    expect(logged.pathname).toBe("/api/auth/verify-email");
    expect(logged.searchParams.get("token")).toBe(jwt);
    expect(logged.searchParams.get("callbackURL")).toBe("/");
  });

  it("logs a one-time code", async () => {
    await devOutbox().send({ to: "person@example.com", subject: "Code", text: "123456", code: "123456" });
    expect(JSON.parse(lines[0]).code).toBe("123456");
  });

  it("loggableLink keeps links without a query as they are", () => {
    expect(loggableLink("http://h/api/auth/reset-password/abc")).toBe("http://h/api/auth/reset-password/abc");
  });
});
