/**
 * The emails of Better Auth's flows (verification, password reset, magic link, email OTP) as the
 * callbacks its options take, all sent through one {@link MailSender}. A message that cannot be
 * sent answers 503 `MAIL_UNAVAILABLE` instead of a 500.
 */
import { APIError } from "better-auth/api";
import { logger } from "service-auth/server";
import type { MailMessage, MailSender } from "./sender.ts";

/** What an email OTP is for; Better Auth 1.7 adds `change-email` to 1.4's three. */
type OtpType = "sign-in" | "email-verification" | "forget-password" | "change-email";

const OTP_SUBJECT: Record<OtpType, string> = {
  "sign-in": "Your sign-in code",
  "email-verification": "Your email verification code",
  "forget-password": "Your password reset code",
  "change-email": "Your email change code",
};

/** The Better Auth callbacks sending the flows' emails. */
export interface AuthEmails {
  /** `emailVerification.sendVerificationEmail` */
  sendVerificationEmail(data: { user: { email: string }; url: string }): Promise<void>;
  /** `emailAndPassword.sendResetPassword` */
  sendResetPassword(data: { user: { email: string }; url: string }): Promise<void>;
  /** `magicLink({ sendMagicLink })` */
  sendMagicLink(data: { email: string; url: string }): Promise<void>;
  /** `emailOTP({ sendVerificationOTP })` */
  sendVerificationOTP(data: { email: string; otp: string; type: OtpType }): Promise<void>;
}

/** `appName` appears in subjects and bodies ("Example: Verify your email address"). */
export function authEmails(sender: MailSender, appName: string): AuthEmails {
  const deliver = async (message: MailMessage) => {
    try {
      await sender.send({ ...message, subject: `${appName}: ${message.subject}` });
    } catch (error) {
      logger.error("mail not sent", {
        transport: sender.kind,
        reason: error instanceof Error ? error.message : String(error),
      });
      throw new APIError("SERVICE_UNAVAILABLE", {
        message: "The email could not be sent; try again later",
        code: "MAIL_UNAVAILABLE",
      });
    }
  };
  const ignore = "If you did not ask for this, ignore this email.";
  return {
    sendVerificationEmail: ({ user, url }) =>
      deliver({
        to: user.email,
        subject: "Verify your email address",
        text: `Open this link to verify your email address for ${appName}:\n\n${url}\n\n${ignore}\n`,
        link: url,
      }),
    sendResetPassword: ({ user, url }) =>
      deliver({
        to: user.email,
        subject: "Reset your password",
        text: `Open this link to choose a new password for ${appName}:\n\n${url}\n\n${ignore}\n`,
        link: url,
      }),
    sendMagicLink: ({ email, url }) =>
      deliver({
        to: email,
        subject: "Your sign-in link",
        text: `Open this link to sign in to ${appName}:\n\n${url}\n\n${ignore}\n`,
        link: url,
      }),
    sendVerificationOTP: ({ email, otp, type }) =>
      deliver({
        to: email,
        subject: OTP_SUBJECT[type],
        text: `Your ${appName} code is ${otp}\n\n${ignore}\n`,
        code: otp,
      }),
  };
}
