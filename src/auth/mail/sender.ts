/**
 * What the auth flows hand to a mail transport: one message, and the link or code it carries kept
 * apart from the text, so a development outbox can show just that.
 */

/**
 * One email. `text` is the whole body; `link` / `code` repeat what the recipient must use.
 *
 * @example
 * ```ts
 * import type { MailMessage } from "service-auth/auth";
 *
 * const message: MailMessage = {
 *   to: "ada@example.com",
 *   subject: "Your sign-in code",
 *   text: "Your Example code is 123456",
 *   code: "123456",
 * };
 * await mailSenderOf(env).send(message);
 * ```
 */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The link the recipient follows (verification, password reset, magic link). */
  link?: string;
  /** The one-time code the recipient types (email OTP). */
  code?: string;
}

/**
 * Delivers messages: SMTP ({@link smtpSender}), the development outbox ({@link devOutbox}), or the
 * mail outbox ({@link mailOutbox}), which queues them for one of the other two.
 *
 * @example
 * ```ts
 * import { authEmails, type MailMessage, type MailSender } from "service-auth/auth";
 *
 * // A sender for tests: keeps the messages instead of sending them.
 * const sent: MailMessage[] = [];
 * const memorySender: MailSender = { kind: "dev-outbox", send: async (message) => void sent.push(message) };
 * const emails = authEmails(memorySender, "Example");
 * ```
 */
export interface MailSender {
  /** Where messages go, for logs and start-up lines (never credentials). */
  readonly kind: "smtp" | "dev-outbox" | "outbox";
  /** Resolves once the transport accepted the message (the outbox: once it is queued); rejects when it did not. */
  send(message: MailMessage): Promise<void>;
}
