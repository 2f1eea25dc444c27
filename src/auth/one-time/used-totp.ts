/**
 * A TOTP code is accepted once (issue 45, docs/security.md "One-time credentials under
 * concurrency"). Better Auth's two-factor plugin (1.4.9 and 1.7) accepts a code as long as its time
 * step is within one step of now, and keeps no record of a code it accepted: a new sign-in could
 * present it again. This before-hook of `/two-factor/verify-totp` (the one route that checks a TOTP
 * code; `/two-factor/enable` takes none) finds the user the request is for (its session, else the
 * two-factor cookie, as Better Auth's `verifyTwoFactor` does) and the time step the presented code
 * belongs to. A used code (that user, that step, that code) leaves a row in the verification table;
 * one found refuses the request with Better Auth's own 401 `INVALID_CODE`, and the audit trail (when
 * installed) records the refused reuse. A code that matches no step is left to Better Auth to refuse.
 *
 * The route runs as one write transaction (routes.ts), so of parallel requests with one code, on
 * any instance, exactly one finds no row and writes it: the others see it (SQLite runs them one
 * after another; on PostgreSQL the conflicting SERIALIZABLE ones run again). The row holds no code:
 * its identifier is a SHA-256 of user, step and code, its value the user id, and it expires when
 * the code would no longer be accepted anyway (the housekeeping's `deleteExpired` removes it).
 */
import { createHash, createHmac } from "node:crypto";
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { symmetricDecrypt } from "better-auth/crypto";
import { AUTH_ERROR_CODES } from "../error-codes.ts";
import { type TwoFactorCtx as Ctx, twoFactorUserId } from "./two-factor-user.ts";

/** The route that verifies a TOTP code. */
export const VERIFY_TOTP_PATH = "/two-factor/verify-totp";

const USED_PREFIX = "used-totp:";
/** Steps either side of now Better Auth accepts (its `verify` default on both lines). */
const WINDOW = 1;
/** Kept a minute past the code's last accepted moment: clock skew between instances. */
const SKEW_MS = 60_000;
/** 1.7 stores an imported secret as `base32:<secret>` (its `decryptTOTPSecret`). */
const BASE32_PREFIX = "base32:";

/** The verification identifier recording that `userId` used `code` for time step `step`. */
export function usedTotpIdentifier(userId: string, step: number, code: string): string {
  const digest = createHash("sha256").update(`${userId}\n${step}\n${code}`).digest("base64url");
  return USED_PREFIX + digest;
}

/** RFC 4226 HOTP as Better Auth computes it (HMAC-SHA-1; a string key as UTF-8 bytes). */
export function hotp(key: string | Uint8Array, counter: number, digits: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac("sha1", key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits).padStart(digits, "0");
}

/**
 * The time step whose code is `code`, within the window around `now` and one step more each side:
 * Better Auth checks a moment later, perhaps in the next step, and a code it accepts then must have
 * been found here (one it refuses costs nothing to record).
 */
export function stepOf(
  code: string,
  key: string | Uint8Array,
  { period, digits, now = Date.now() }: { period: number; digits: number; now?: number },
): number | undefined {
  const current = Math.floor(now / (period * 1000));
  for (let step = current - WINDOW - 1; step <= current + WINDOW + 1; step++)
    if (hotp(key, step, digits) === code) return step;
  return undefined;
}

function base32Decode(text: string): Uint8Array {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of text.replace(/=+$/, "").toUpperCase()) {
    const index = alphabet.indexOf(c);
    if (index < 0) throw new Error("invalid base32");
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >>> bits) & 0xff);
    }
  }
  return Uint8Array.from(bytes);
}

/** The user's TOTP key (decrypted as the two-factor plugin does), or undefined. */
async function totpKeyOf(ctx: Ctx, userId: string): Promise<string | Uint8Array | undefined> {
  const row = await ctx.context.adapter.findOne<{ secret?: string }>({
    model: "twoFactor",
    where: [{ field: "userId", value: userId }],
  });
  if (typeof row?.secret !== "string") return undefined;
  // 1.7 decrypts with its secret set (rotation); 1.4.9 with the one secret.
  const key = (ctx.context as { secretConfig?: unknown }).secretConfig ?? ctx.context.secret;
  const secret = await symmetricDecrypt({ key: key as string, data: row.secret });
  return secret.startsWith(BASE32_PREFIX) ? base32Decode(secret.slice(BASE32_PREFIX.length)) : secret;
}

/** A plugin that can record a refused reuse (the audit trail's `recordRefusedReuse`). */
interface ReuseRecorder {
  id: string;
  recordRefusedReuse?(
    ctx: unknown,
    facts: { targetId: string; reason: string; status: number },
  ): Promise<void>;
}

/** The before-hook refusing a used TOTP code; the `backend` plugin carries it. */
export const usedTotpHook: NonNullable<NonNullable<BetterAuthPlugin["hooks"]>["before"]>[number] = {
  matcher: (ctx) => ctx.path === VERIFY_TOTP_PATH,
  handler: createAuthMiddleware(async (ctx) => {
    const code = (ctx.body as { code?: unknown } | undefined)?.code;
    if (typeof code !== "string" || code === "") return;
    const plugin = ctx.context.options.plugins?.find((p) => p.id === "two-factor") as
      | { options?: { totpOptions?: { period?: number; digits?: number; disable?: boolean } } }
      | undefined;
    const totpOptions = plugin?.options?.totpOptions;
    if (!plugin || totpOptions?.disable) return;
    const period = totpOptions?.period || 30;
    const digits = totpOptions?.digits || 6;
    const userId = await twoFactorUserId(ctx);
    if (!userId) return;
    const key = await totpKeyOf(ctx, userId).catch(() => undefined);
    if (key === undefined) return;
    const step = stepOf(code, key, { period, digits });
    // No step of the window has this code: Better Auth refuses it (and counts the attempt).
    if (step === undefined) return;
    const identifier = usedTotpIdentifier(userId, step, code);
    const { internalAdapter } = ctx.context;
    if (await internalAdapter.findVerificationValue(identifier)) {
      const audit = ctx.context.options.plugins?.find((p) => p.id === "audit-trail") as
        | ReuseRecorder
        | undefined;
      const { status } = AUTH_ERROR_CODES.INVALID_CODE;
      await audit?.recordRefusedReuse?.(ctx, { targetId: userId, reason: "INVALID_CODE", status });
      throw new APIError("UNAUTHORIZED", { message: "Invalid code", code: "INVALID_CODE" });
    }
    // Accepted until the server's step passes step + WINDOW.
    const expiresAt = new Date((step + WINDOW + 1) * period * 1000 + SKEW_MS);
    await internalAdapter.createVerificationValue({ identifier, value: userId, expiresAt });
  }),
};
