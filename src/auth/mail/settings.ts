/**
 * The mail setting: `SMTP_URL` and `MAIL_FROM` choose SMTP; without `SMTP_URL` the development
 * outbox logs each message, and in production there is no outbox: a missing `SMTP_URL` is a
 * configuration error the server refuses to start with.
 */
import type { EnvReader } from "service-auth/server";
import { devOutbox } from "./dev-outbox.ts";
import type { MailSender } from "./sender.ts";
import { smtpSender } from "./smtp.ts";

export const SMTP_URL_VAR = "SMTP_URL";
export const MAIL_FROM_VAR = "MAIL_FROM";

/** A mail setting that cannot work; the message names the variable, never its value (it may hold a password). */
export class MailSettingsError extends Error {
  override name = "MailSettingsError";
}

export interface MailSettingsOptions {
  /** Production refuses the development outbox. Default: `NODE_ENV === "production"`. */
  production?: boolean;
}

/** Apps build their auth per request: the SMTP transport is made once per setting (the latest kept). */
let smtp: { key: string; sender: MailSender } | undefined;
let outbox: MailSender | undefined;

/**
 * The sender the environment configures. Throws {@link MailSettingsError} when `SMTP_URL` is not an
 * `smtp:` / `smtps:` URL, when `MAIL_FROM` is missing beside it, or in production without SMTP.
 */
export function mailSenderOf(env: EnvReader, options: MailSettingsOptions = {}): MailSender {
  const production = options.production ?? process.env.NODE_ENV === "production";
  const url = env.get(SMTP_URL_VAR);
  if (!url) {
    if (production) {
      throw new MailSettingsError(
        `${SMTP_URL_VAR} is not set (NODE_ENV=production): set ${SMTP_URL_VAR}=smtp://user:pass@host:587 and ${MAIL_FROM_VAR}; the development outbox only logs messages`,
      );
    }
    outbox ??= devOutbox();
    return outbox;
  }
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new MailSettingsError(`${SMTP_URL_VAR} is not a URL (expected smtp://user:pass@host:port)`);
  }
  if (protocol !== "smtp:" && protocol !== "smtps:")
    throw new MailSettingsError(`${SMTP_URL_VAR} must start with smtp:// or smtps://`);
  const from = env.get(MAIL_FROM_VAR);
  if (!from)
    throw new MailSettingsError(`${MAIL_FROM_VAR} must be set with ${SMTP_URL_VAR} (the From address)`);
  const key = JSON.stringify([url, from]);
  if (smtp?.key !== key) smtp = { key, sender: smtpSender({ url, from }) };
  return smtp.sender;
}
