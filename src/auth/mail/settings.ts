/**
 * The mail setting: `SMTP_URL` and `MAIL_FROM` choose SMTP; without `SMTP_URL` the development
 * outbox logs each message, and in production there is no outbox: a missing `SMTP_URL` is a
 * configuration error the server refuses to start with.
 */
import { type EnvReader, type SettingProblem, settingProblem } from "service-auth/server";
import { devOutbox } from "./dev-outbox.ts";
import type { MailSender } from "./sender.ts";
import { smtpSender } from "./smtp.ts";

/**
 * The name of the mail server setting in the env store: `SMTP_URL` (`smtp://user:pass@host:587`
 * or `smtps://…`).
 *
 * @example
 * ```ts
 * import { SMTP_URL_VAR } from "service-auth/auth";
 *
 * if (!env.get(SMTP_URL_VAR)) logger.info(`no ${SMTP_URL_VAR}: emails are logged (development outbox)`);
 * ```
 */
export const SMTP_URL_VAR = "SMTP_URL";
/**
 * The name of the From address setting in the env store: `MAIL_FROM`, needed beside `SMTP_URL`.
 *
 * @example
 * ```ts
 * import { MAIL_FROM_VAR, SMTP_URL_VAR, smtpSender } from "service-auth/auth";
 *
 * const sender = smtpSender({ url: env.get(SMTP_URL_VAR)!, from: env.get(MAIL_FROM_VAR)! });
 * ```
 */
export const MAIL_FROM_VAR = "MAIL_FROM";

/**
 * A mail setting that cannot work; the message names the variable, never its value (it may hold a password).
 *
 * @example
 * ```ts
 * import { MailSettingsError, mailSenderOf } from "service-auth/auth";
 *
 * try {
 *   mailSenderOf(env, { production: true });
 * } catch (error) {
 *   // e.g. "SMTP_URL is not set (NODE_ENV=production; …): set SMTP_URL=smtp://user:pass@host:587"
 *   if (error instanceof MailSettingsError) logger.error(error.message);
 *   else throw error;
 * }
 * ```
 */
export class MailSettingsError extends Error {
  override name = "MailSettingsError";
}

/**
 * Options of {@link mailSettingsProblems} and {@link mailSenderOf}: whether this is production,
 * where the development outbox is refused.
 *
 * @example
 * ```ts
 * import { type MailSettingsOptions, mailSenderOf, mailSettingsProblems } from "service-auth/auth";
 *
 * const options: MailSettingsOptions = { production: process.env.NODE_ENV === "production" };
 * check.add(...mailSettingsProblems(backend.env, options));
 * const sender = mailSenderOf(backend.env, options);
 * ```
 */
export interface MailSettingsOptions {
  /** Production refuses the development outbox. Default: `NODE_ENV === "production"`. */
  production?: boolean;
}

/** Apps build their auth per request: the SMTP transport is made once per setting (the latest kept). */
let smtp: { key: string; sender: MailSender } | undefined;
let outbox: MailSender | undefined;

/**
 * Every problem of the mail setting: in production `SMTP_URL` is needed; an `SMTP_URL` must be an
 * `smtp:` / `smtps:` URL, and needs `MAIL_FROM` beside it. Values are masked (the URL's password);
 * one that is not a URL is not shown at all.
 *
 * @example
 * ```ts
 * import { mailSettingsProblems } from "service-auth/auth";
 *
 * // main.ts `prepare`: a broken mail setting stops the start, named with every other problem.
 * check.add(...mailSettingsProblems(backend.env, { production }));
 * check.refuseIfAny();
 * ```
 */
export function mailSettingsProblems(env: EnvReader, options: MailSettingsOptions = {}): SettingProblem[] {
  const production = options.production ?? process.env.NODE_ENV === "production";
  const url = env.get(SMTP_URL_VAR);
  const from = env.get(MAIL_FROM_VAR);
  const problems: SettingProblem[] = [];
  if (!url) {
    if (!production) return [];
    problems.push(
      settingProblem(
        SMTP_URL_VAR,
        undefined,
        "is not set (NODE_ENV=production; the development outbox only logs messages)",
        `set ${SMTP_URL_VAR}=smtp://user:pass@host:587`,
      ),
    );
  } else {
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      problems.push(
        settingProblem(
          SMTP_URL_VAR,
          undefined,
          "is not a URL",
          `set ${SMTP_URL_VAR}=smtp://user:pass@host:587`,
        ),
      );
    }
    if (protocol !== undefined && protocol !== "smtp:" && protocol !== "smtps:") {
      problems.push(
        settingProblem(
          SMTP_URL_VAR,
          url,
          "must start with smtp:// or smtps://",
          `set ${SMTP_URL_VAR}=smtp://user:pass@host:587 (or smtps://…:465)`,
        ),
      );
    }
  }
  if (!from) {
    problems.push(
      settingProblem(
        MAIL_FROM_VAR,
        undefined,
        `must be set with ${SMTP_URL_VAR} (the From address)`,
        `set ${MAIL_FROM_VAR}="App <no-reply@example.com>"`,
      ),
    );
  }
  return problems;
}

/**
 * The sender the environment configures. Throws {@link MailSettingsError} when `SMTP_URL` is not an
 * `smtp:` / `smtps:` URL, when `MAIL_FROM` is missing beside it, or in production without SMTP
 * (see {@link mailSettingsProblems}; the message names the variables, never their values).
 *
 * @example
 * ```ts
 * import { mailSenderOf } from "service-auth/auth";
 *
 * if (mailSenderOf(backend.env, { production }).kind === "dev-outbox")
 *   logger.info("no SMTP_URL: emails are logged (development outbox)");
 * ```
 */
export function mailSenderOf(env: EnvReader, options: MailSettingsOptions = {}): MailSender {
  const problems = mailSettingsProblems(env, options);
  if (problems.length > 0) {
    throw new MailSettingsError(problems.map((p) => `${p.name} ${p.problem}: ${p.fix}`).join("; "));
  }
  const url = env.get(SMTP_URL_VAR);
  if (!url) {
    outbox ??= devOutbox();
    return outbox;
  }
  const from = env.get(MAIL_FROM_VAR) as string;
  const key = JSON.stringify([url, from]);
  if (smtp?.key !== key) smtp = { key, sender: smtpSender({ url, from }) };
  return smtp.sender;
}
