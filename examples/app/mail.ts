/**
 * The mail outbox's internal functions (`mail:enqueue`, `mail:deliver`): the auth flows' emails
 * are queued in the request's transaction and sent after it commits, retried with back-off while
 * the mail server does not take them (see `mailOutboxFunctions` in service-auth/auth).
 */

import { type MailOutboxRefs, mailOutboxFunctions } from "service-auth/auth";
import { anyApi } from "service-auth/server";

/** This module's references (`internal.mail`). */
export const mailRefs: MailOutboxRefs = anyApi.mail;

export const { enqueue, deliver } = mailOutboxFunctions({ self: mailRefs });
