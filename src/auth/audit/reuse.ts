/**
 * Refused reuse of a one-time credential (issue 45): when a route of one-time/routes.ts consumes a
 * verification row (deletes it), a tombstone is left in the verification table under a hash of its
 * identifier, expiring with the credential (housekeeping removes both alike). A later request that
 * fails on that credential while its row is gone and the tombstone is there is a second consumer
 * of a consumed credential: the audit trail records it as `credential.reused`. The tombstone
 * holds no token: its identifier is a SHA-256 of the consumed identifier, its value a constant.
 * Credentials kept elsewhere (backup codes, API keys) leave a tombstone of the same kind under a
 * name of their own ({@link tombstoneFor}); invitations keep their status and need none.
 */
import { createHash } from "node:crypto";
import { ONE_TIME_ROUTES } from "../one-time/routes.ts";

const TOMBSTONE_PREFIX = "consumed:";
const TOMBSTONE_VALUE = "consumed";

/** The tombstone's identifier for a consumed identifier. */
export function tombstoneOf(identifier: string): string {
  return TOMBSTONE_PREFIX + createHash("sha256").update(identifier).digest("base64url");
}

/** True when deleting `identifier` on `path` consumes a credential (and is not a tombstone's own delete). */
export function consumesOn(path: string, identifier: unknown): identifier is string {
  return (
    ONE_TIME_ROUTES.includes(path) &&
    typeof identifier === "string" &&
    identifier !== "" &&
    !identifier.startsWith(TOMBSTONE_PREFIX)
  );
}

/** The tombstone row of a consumed verification row. */
export function tombstoneRow(verification: { identifier: string; expiresAt: unknown }) {
  const now = new Date();
  const expiresAt =
    verification.expiresAt instanceof Date
      ? verification.expiresAt
      : new Date(Number(verification.expiresAt));
  return {
    identifier: tombstoneOf(verification.identifier),
    value: TOMBSTONE_VALUE,
    // At least a minute, so a reuse right after an expired credential was swept is still seen.
    expiresAt: new Date(Math.max(expiresAt.getTime() || 0, now.getTime() + 60_000)),
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * How long a used backup code or a used-up API key is remembered. Neither expires by itself; a
 * reuse within this time is recognised, and the tombstones do not pile up for ever.
 */
export const REMEMBER_USED_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * The tombstone of a used credential that is no verification row: `name` says which (e.g. user and
 * backup code) and is stored only as its SHA-256; `value` is a user id, never the credential.
 */
export function tombstoneFor(name: string, value: string) {
  const now = new Date();
  return {
    identifier: tombstoneOf(name),
    value,
    expiresAt: new Date(now.getTime() + REMEMBER_USED_MS),
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * True for an endpoint's error answer. Not `instanceof APIError` from `better-auth/api`: on 1.7
 * that is a subclass, and errors made with `ctx.error()` (the one-time-token plugin's) are
 * better-call's own class.
 */
export function isErrorAnswer(value: unknown): value is Error & { statusCode: number; body?: unknown } {
  return value instanceof Error && typeof (value as { statusCode?: unknown }).statusCode === "number";
}

/** What an endpoint's hook context offers to name the credential a request presented. */
interface RequestFacts {
  body?: any;
  query?: any;
}

const lower = (value: unknown) => (typeof value === "string" ? value.trim().toLowerCase() : undefined);
const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** The verification identifiers of `key` (a token, a phone number) as 1.4.9 and 1.7 name them. */
const onEachLine = (key: string | undefined, pinned: string, next: string) =>
  key ? [pinned.replace("#", () => key), next.replace("#", () => key)] : undefined;

/**
 * Per route, the verification identifier of the credential a request presents (as Better Auth
 * stores it: plain tokens, the default), or each line's where they differ (magic links, phone
 * OTPs). Routes whose credential lives elsewhere (backup codes, invitations, API keys, device
 * codes) are not listed.
 */
export const PRESENTED_IDENTIFIER: Readonly<
  Record<string, (ctx: RequestFacts) => string | readonly string[] | undefined>
> = {
  "/reset-password": (ctx) => text(ctx.body?.token) && `reset-password:${ctx.body.token}`,
  "/magic-link/verify": (ctx) => onEachLine(text(ctx.query?.token), "#", "magic-link:#"),
  "/one-time-token/verify": (ctx) => text(ctx.body?.token) && `one-time-token:${ctx.body.token}`,
  "/sign-in/email-otp": (ctx) => lower(ctx.body?.email) && `sign-in-otp-${lower(ctx.body.email)}`,
  "/email-otp/verify-email": (ctx) =>
    lower(ctx.body?.email) && `email-verification-otp-${lower(ctx.body.email)}`,
  "/email-otp/reset-password": (ctx) =>
    lower(ctx.body?.email) && `forget-password-otp-${lower(ctx.body.email)}`,
  "/phone-number/verify": (ctx) => onEachLine(text(ctx.body?.phoneNumber), "#", "phone-number-otp-#"),
  "/phone-number/reset-password": (ctx) =>
    onEachLine(text(ctx.body?.phoneNumber), "#-request-password-reset", "phone-number-reset-#"),
};
