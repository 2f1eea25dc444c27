/**
 * The development outbox: instead of sending, it logs each message's subject and its link or code
 * through the platform logger, so sign-up, reset and sign-in by email work on a laptop without a
 * mail server. {@link mailSenderOf} never picks it in production.
 */
import { logger } from "service-auth/server";
import type { MailMessage, MailSender } from "./sender.ts";

/**
 * The link as the log shows it. The platform logger hides JWT-shaped strings, and the email
 * verification token is a JWT; showing the link is this outbox's whole job, so the query values
 * are written percent-encoded, dots included: the same link once the browser decodes it.
 */
export function loggableLink(link: string): string {
  const url = new URL(link);
  const query = [...url.searchParams]
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v).replaceAll(".", "%2E")}`)
    .join("&");
  return `${url.origin}${url.pathname}${query ? `?${query}` : ""}`;
}

/**
 * A sender that logs instead of sending (the recipient's address is redacted like in every log line).
 *
 * @example
 * ```ts
 * import { authEmails, devOutbox } from "service-auth/auth";
 *
 * // Emails logged instead of sent, e.g. in a local script or test.
 * const emails = authEmails(devOutbox(), "Example");
 * await emails.sendMagicLink({
 *   email: "ada@example.com",
 *   url: "http://localhost:3000/api/auth/magic-link/verify?token=…",
 * });
 * ```
 */
export function devOutbox(): MailSender {
  return {
    kind: "dev-outbox",
    async send(message: MailMessage) {
      // The code before the recipient, and the link last: a readable log line (LOG_FORMAT=text)
      // puts a `link` on a line of its own.
      logger.info(`development outbox (no SMTP_URL): ${message.subject}`, {
        ...(message.code ? { code: message.code } : {}),
        to: message.to,
        ...(message.link ? { link: loggableLink(message.link) } : {}),
      });
    },
  };
}
