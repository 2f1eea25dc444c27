/**
 * Every email OTP purpose gets its own subject, Better Auth 1.7's `change-email` included (1.4
 * sends the first three only), with the code kept apart from the text.
 */
import { describe, expect, it } from "vitest";
import { authEmails } from "../../../src/auth/mail/auth-emails.ts";
import type { MailMessage, MailSender } from "../../../src/auth/mail/sender.ts";

describe("sendVerificationOTP", () => {
  it("names the purpose in the subject for each OTP type", async () => {
    const sent: MailMessage[] = [];
    const sender: MailSender = { kind: "dev-outbox", send: async (message) => void sent.push(message) };
    const emails = authEmails(sender, "Example");
    const types = ["sign-in", "email-verification", "forget-password", "change-email"] as const;
    for (const type of types)
      await emails.sendVerificationOTP({ email: "a@example.com", otp: "123456", type });
    expect(sent.map((m) => m.subject)).toEqual([
      "Example: Your sign-in code",
      "Example: Your email verification code",
      "Example: Your password reset code",
      "Example: Your email change code",
    ]);
    expect(sent.every((m) => m.code === "123456" && m.to === "a@example.com")).toBe(true);
  });
});
