/** A {@link MailSender} over SMTP through nodemailer. */
import { createTransport } from "nodemailer";
import type { MailMessage, MailSender } from "./sender.ts";

/**
 * Where {@link smtpSender} sends: the SMTP server's URL and the From address.
 *
 * @example
 * ```ts
 * import { type SmtpSettings, smtpSender } from "service-auth/auth";
 *
 * const settings: SmtpSettings = {
 *   url: "smtps://mailer:secret@smtp.example.com:465",
 *   from: "Example <no-reply@example.com>",
 * };
 * const sender = smtpSender(settings);
 * ```
 */
export interface SmtpSettings {
  /** `smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://…` (TLS from the start). */
  url: string;
  /** The From header, e.g. `Example <no-reply@example.com>`. */
  from: string;
}

/** Bounds per message, so a stuck SMTP server fails the request instead of holding it. */
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 20_000;

/**
 * Sends each message over one SMTP connection (nodemailer opens and closes it per message).
 *
 * @example
 * ```ts
 * import { authEmails, smtpSender } from "service-auth/auth";
 *
 * // Sent inside the request (no outbox): a failure answers 503 MAIL_UNAVAILABLE.
 * const sender = smtpSender({
 *   url: "smtp://mailer:secret@smtp.example.com:587",
 *   from: "Example <no-reply@example.com>",
 * });
 * const emails = authEmails(sender, "Example");
 * ```
 */
export function smtpSender(settings: SmtpSettings): MailSender {
  const transport = createTransport(
    {
      url: settings.url,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
      greetingTimeout: CONNECTION_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
    },
    { from: settings.from },
  );
  return {
    kind: "smtp",
    async send(message: MailMessage) {
      await transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
    },
  };
}
