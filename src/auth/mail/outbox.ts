/**
 * The mail outbox: the auth flows' emails are queued as scheduled jobs and sent after the request's
 * transaction commits, with retries and back-off. Queued inside sign-up's transaction, the job
 * commits with the user or not at all; the SMTP conversation then happens outside any transaction,
 * so a slow mail server never holds the write lock, and a mail server that is down delays the
 * email instead of failing (or undoing) the sign-up.
 *
 * Each attempt is one run of the `deliver` action (an action runs at most once: a process that dies
 * mid-send marks it failed, never sends twice). A failed attempt schedules the next one, then fails
 * with the reason, so every attempt is visible in `jobs list` and the console; after the last one
 * the email is given up and its job says so.
 */
import {
  type ActionCtx,
  backoffDelayMs,
  type FunctionReference,
  functionsFor,
  logger,
  type MutationCtx,
  type QueryCtx,
} from "service-auth/server";
import { v } from "service-auth/values";
import type { MailMessage, MailSender } from "./sender.ts";
import { mailSenderOf } from "./settings.ts";

/**
 * The outbox's functions as the app exports them (e.g. `internal.mail` for a module `mail.ts`).
 *
 * @example
 * ```ts
 * // mail.ts
 * import { type MailOutboxRefs, mailOutboxFunctions } from "service-auth/auth";
 * import { anyApi } from "service-auth/server";
 *
 * export const mailRefs: MailOutboxRefs = anyApi.mail;
 * export const { enqueue, deliver } = mailOutboxFunctions({ self: mailRefs });
 * ```
 */
export interface MailOutboxRefs {
  enqueue: FunctionReference<"mutation", any, { message: MailMessage }, string>;
  deliver: FunctionReference<"action", any, { message: MailMessage; attempt?: number }, null>;
}

/**
 * How the outbox retries a message the mail server did not take.
 *
 * @example
 * ```ts
 * import { type MailRetryOptions, mailOutboxFunctions } from "service-auth/auth";
 *
 * // Five attempts: after 5 s, 10 s, 20 s and 40 s.
 * const retry: MailRetryOptions = { attempts: 5, firstRetryMs: 5_000, maxRetryMs: 60_000 };
 * export const { enqueue, deliver } = mailOutboxFunctions({ self: mailRefs, retry });
 * ```
 */
export interface MailRetryOptions {
  /** Attempts in all before the message is given up (default 12). */
  attempts?: number;
  /** Wait before the second attempt (default 1 s); it doubles with each further attempt. */
  firstRetryMs?: number;
  /** Longest wait between two attempts (default 15 minutes). */
  maxRetryMs?: number;
}

const DEFAULT_ATTEMPTS = 12;
const DEFAULT_FIRST_RETRY_MS = 1000;
const DEFAULT_MAX_RETRY_MS = 15 * 60_000;
const MAX_ATTEMPTS = 100;

/**
 * The wait after failed attempt `attempt` (1-based): doubling from `firstRetryMs`, at most `maxRetryMs`.
 *
 * @example
 * ```ts
 * import { retryDelayMs } from "service-auth/auth";
 *
 * retryDelayMs(1); // 1000: the wait before the second attempt
 * retryDelayMs(3, { firstRetryMs: 500 }); // 2000
 * retryDelayMs(20); // 900000: at most 15 minutes by default
 * ```
 */
export function retryDelayMs(attempt: number, options: MailRetryOptions = {}): number {
  const first = options.firstRetryMs ?? DEFAULT_FIRST_RETRY_MS;
  const max = options.maxRetryMs ?? DEFAULT_MAX_RETRY_MS;
  return backoffDelayMs({ firstMs: first, maxMs: max, jitter: "none" }, attempt - 1);
}

/** Bounds of a queued message (the callbacks make them; the bound keeps a job row small). */
const messageValidator = v.object({
  to: v.string(),
  subject: v.string(),
  text: v.string(),
  link: v.optional(v.string()),
  code: v.optional(v.string()),
});
const MAX_TEXT = 20_000;

/**
 * The outbox's internal functions: export both from one module of the app (the example's
 * `mail.ts`) and give that module's references as `self`.
 *
 * @example
 * // mail.ts
 * export const { enqueue, deliver } = mailOutboxFunctions({ self: internal.mail });
 */
export function mailOutboxFunctions(options: { self: MailOutboxRefs; retry?: MailRetryOptions }) {
  const { internalMutation, internalAction } = functionsFor();
  const attempts = Math.max(
    1,
    Math.min(MAX_ATTEMPTS, Math.floor(options.retry?.attempts ?? DEFAULT_ATTEMPTS)),
  );
  return {
    /** Queues `message` in the caller's transaction; resolves with the delivery job's id. */
    enqueue: internalMutation({
      args: { message: messageValidator },
      handler: (ctx, { message }) => queueIn(ctx, options.self, message),
    }),
    /** One attempt to send `message`; a failure schedules the next attempt and fails this run. */
    deliver: internalAction({
      args: { message: messageValidator, attempt: v.optional(v.number()) },
      handler: async (ctx, { message, attempt = 1 }) => {
        try {
          await mailSenderOf(ctx.env).send(message);
          return null;
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          if (attempt >= attempts) {
            logger.error("mail given up", { attempts, reason });
            throw new Error(`Not sent after ${attempts} attempts, given up: ${reason}`);
          }
          const wait = retryDelayMs(attempt, options.retry);
          await ctx.scheduler.runAfter(wait, options.self.deliver, { message, attempt: attempt + 1 });
          throw new Error(`Not sent (attempt ${attempt} of ${attempts}; next in ${wait} ms): ${reason}`);
        }
      },
    }),
  };
}

/** Schedules the first delivery attempt in a mutation's transaction. */
function queueIn(ctx: Pick<MutationCtx, "scheduler">, refs: MailOutboxRefs, message: MailMessage) {
  if (message.text.length > MAX_TEXT)
    throw new Error("A queued email's text is limited to 20,000 characters");
  return ctx.scheduler.runAfter(0, refs.deliver, { message, attempt: 1 });
}

/**
 * The sender the auth callbacks ({@link authEmails}) use to queue their emails, from the ctx the auth
 * is made with: in a mutation the job is written in its transaction; in an action (the HTTP routes)
 * through `enqueue`, which joins the `runInTransaction` scope the auth request runs in (sign-up's),
 * else commits on its own. A query cannot write: its auth sends no email.
 *
 * @example
 * ```ts
 * import { authEmails, mailOutbox } from "service-auth/auth";
 * import { mailRefs } from "./mail.ts";
 *
 * // auth.ts, in the options made per request from `ctx` (action, mutation or query).
 * const emails = authEmails(mailOutbox(ctx, mailRefs), "Example");
 * ```
 */
export function mailOutbox(
  ctx: ActionCtx | MutationCtx<any> | QueryCtx<any>,
  refs: MailOutboxRefs,
): MailSender {
  return {
    kind: "outbox",
    async send(message) {
      if ("scheduler" in ctx && "db" in ctx) await queueIn(ctx, refs, message);
      else if ("runMutation" in ctx) await ctx.runMutation(refs.enqueue, { message });
      else throw new Error("An email cannot be queued from a query (no write transaction)");
    },
  };
}
