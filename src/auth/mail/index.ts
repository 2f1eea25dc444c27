/** Mail for the auth flows: a sender interface, SMTP, the development outbox, the setting that picks one, the outbox queue. */
export type { AuthEmails } from "./auth-emails.ts";
export { authEmails } from "./auth-emails.ts";
export { devOutbox, loggableLink } from "./dev-outbox.ts";
export type { MailOutboxRefs, MailRetryOptions } from "./outbox.ts";
export { mailOutbox, mailOutboxFunctions, retryDelayMs } from "./outbox.ts";
export type { MailMessage, MailSender } from "./sender.ts";
export type { MailSettingsOptions } from "./settings.ts";
export {
  MAIL_FROM_VAR,
  MailSettingsError,
  mailSenderOf,
  mailSettingsProblems,
  SMTP_URL_VAR,
} from "./settings.ts";
export type { SmtpSettings } from "./smtp.ts";
export { smtpSender } from "./smtp.ts";
