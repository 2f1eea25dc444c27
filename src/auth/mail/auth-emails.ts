/**
 * The emails of Better Auth's flows (verification, password reset, magic link, email OTP) as the
 * callbacks its options take, all sent through one {@link MailSender}. With the mail outbox
 * (outbox.ts, the recommended sender) "sent" means queued in the request's transaction, and the
 * outbox delivers and retries after the commit. With a sender that sends inside the request, a
 * message that cannot be sent is logged and answers 503 `MAIL_UNAVAILABLE` instead of a 500 (sign-up, magic link, email
 * OTP sign-in), except where that answer would tell whether the address has an account (password
 * reset, verification and reset codes, a verification email asked for again): those answer as
 * for an unknown address, which gets no email either.
 */
import { logger } from "service-auth/server";
import type { MailMessage, MailSender } from "./sender.ts";
import { mailUnavailable } from "./unavailable.ts";

/** What an email OTP is for; Better Auth 1.7 adds `change-email` to 1.4's three. */
type OtpType = "sign-in" | "email-verification" | "forget-password" | "change-email";

const OTP_SUBJECT: Record<OtpType, string> = {
  "sign-in": "Your sign-in code",
  "email-verification": "Your email verification code",
  "forget-password": "Your password reset code",
  "change-email": "Your email change code",
};

/**
 * The Better Auth callbacks sending the flows' emails.
 *
 * @example
 * ```ts
 * import type { AuthEmails } from "service-auth/auth";
 *
 * // Options taking the callbacks, as auth.ts passes them to betterAuth.
 * function emailOptions(emails: AuthEmails) {
 *   return {
 *     emailAndPassword: { enabled: true, sendResetPassword: emails.sendResetPassword },
 *     emailVerification: { sendVerificationEmail: emails.sendVerificationEmail, sendOnSignUp: true },
 *   };
 * }
 * ```
 */
export interface AuthEmails {
  /** `emailVerification.sendVerificationEmail` */
  sendVerificationEmail(data: { user: { email: string }; url: string }, request?: Request): Promise<void>;
  /** `emailAndPassword.sendResetPassword` */
  sendResetPassword(data: { user: { email: string }; url: string }): Promise<void>;
  /** `magicLink({ sendMagicLink })` */
  sendMagicLink(data: { email: string; url: string }): Promise<void>;
  /** `emailOTP({ sendVerificationOTP })` */
  sendVerificationOTP(data: { email: string; otp: string; type: OtpType }): Promise<void>;
}

/** True for a request to Better Auth's email sign-up endpoint (`…/sign-up/email`). */
function isSignUp(request: Request | undefined): boolean {
  if (!request) return false;
  try {
    return new URL(request.url).pathname.endsWith("/sign-up/email");
  } catch {
    return false;
  }
}

/**
 * `appName` appears in subjects and bodies ("Example: Verify your email address").
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { emailOTP, magicLink } from "better-auth/plugins";
 * import { authEmails, mailOutbox } from "service-auth/auth";
 * import { mailRefs } from "./mail.ts";
 *
 * // In auth.ts, per request: emails queued in its transaction, sent after the commit.
 * const emails = authEmails(mailOutbox(ctx, mailRefs), "Example");
 * const auth = betterAuth({
 *   emailAndPassword: { enabled: true, sendResetPassword: emails.sendResetPassword },
 *   emailVerification: { sendVerificationEmail: emails.sendVerificationEmail },
 *   plugins: [
 *     magicLink({ sendMagicLink: emails.sendMagicLink }),
 *     emailOTP({ sendVerificationOTP: emails.sendVerificationOTP }),
 *   ],
 * });
 * ```
 */
export function authEmails(sender: MailSender, appName: string): AuthEmails {
  /** `answer`: the request answers a failure with 503 (see {@link mailUnavailable}). */
  const deliver = async (message: MailMessage, answer: boolean) => {
    try {
      await sender.send({ ...message, subject: `${appName}: ${message.subject}` });
    } catch (error) {
      logger.error("mail not sent", {
        transport: sender.kind,
        reason: error instanceof Error ? error.message : String(error),
      });
      throw mailUnavailable(answer);
    }
  };
  const ignore = "If you did not ask for this, ignore this email.";
  return {
    // Sign-up answers 503 (it already tells that an address is taken); asked for again, a
    // verification email is sent only to an address with an account.
    sendVerificationEmail: ({ user, url }, request) =>
      deliver(
        {
          to: user.email,
          subject: "Verify your email address",
          text: `Open this link to verify your email address for ${appName}:\n\n${url}\n\n${ignore}\n`,
          link: url,
        },
        isSignUp(request),
      ),
    // Sent only to an address with an account, so a failure answers as an unknown address does.
    sendResetPassword: ({ user, url }) =>
      deliver(
        {
          to: user.email,
          subject: "Reset your password",
          text: `Open this link to choose a new password for ${appName}:\n\n${url}\n\n${ignore}\n`,
          link: url,
        },
        false,
      ),
    sendMagicLink: ({ email, url }) =>
      deliver(
        {
          to: email,
          subject: "Your sign-in link",
          text: `Open this link to sign in to ${appName}:\n\n${url}\n\n${ignore}\n`,
          link: url,
        },
        true,
      ),
    // A sign-in code goes to any address; the other codes only to an address with an account.
    sendVerificationOTP: ({ email, otp, type }) =>
      deliver(
        {
          to: email,
          subject: OTP_SUBJECT[type],
          text: `Your ${appName} code is ${otp}\n\n${ignore}\n`,
          code: otp,
        },
        type === "sign-in",
      ),
  };
}
