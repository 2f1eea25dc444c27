/**
 * Refused reuse of a credential Better Auth removes, when it is used, from somewhere other than a
 * verification row (issue 45): a two-factor backup code (dropped from the user's encrypted list in
 * their `twoFactor` row) and, on 1.7, a device code (its row consumed by `/device/token`). Presented
 * again, each fails as a wrong one does. So a request that used one leaves a tombstone (reuse.ts:
 * the SHA-256 of a name for it, holding the user id, kept `REMEMBER_USED_MS`), and a refused
 * request presenting it while the tombstone is there is recorded as `credential.reused`. The routes
 * run as one transaction (one-time/routes.ts): of parallel requests with one credential, the one
 * that used it writes the tombstone before the others look.
 */
import { createAuthMiddleware } from "better-auth/api";
import { type TwoFactorCtx, twoFactorUserId } from "../one-time/two-factor-user.ts";
import type { AuditInput } from "./events.ts";
import { isErrorAnswer, tombstoneFor, tombstoneOf } from "./reuse.ts";

/** How a route's credential is named for its tombstone. */
interface Spent {
  /** The user a failed request is for, when the name needs it. */
  userOf(ctx: TwoFactorCtx): Promise<string | undefined>;
  /** The tombstone's name for the credential the request presents (for `userId`), if any. */
  name(ctx: TwoFactorCtx, userId: string | undefined): string | undefined;
}

const bodyText = (ctx: TwoFactorCtx, field: string) => {
  const value = (ctx.body as Record<string, unknown> | undefined)?.[field];
  return typeof value === "string" && value !== "" ? value : undefined;
};

/** Per route (below the auth base path), its credential. */
export const SPENT_ON_USE: Readonly<Record<string, Spent>> = {
  // A backup code is one of the user's: the name holds both.
  "/two-factor/verify-backup-code": {
    userOf: twoFactorUserId,
    name: (ctx, userId) => {
      const code = bodyText(ctx, "code");
      return code && userId ? `backup-code:${userId}\n${code}` : undefined;
    },
  },
  "/device/token": {
    userOf: async () => undefined,
    name: (ctx) => {
      const code = bodyText(ctx, "device_code");
      return code && `device-code:${code}`;
    },
  },
};

function reasonOf(body: unknown): string | null {
  const { code, error } = (body ?? {}) as { code?: unknown; error?: unknown };
  return typeof code === "string" ? code : typeof error === "string" ? error : null;
}

/** The audit trail's after-hook on the routes of {@link SPENT_ON_USE}; `record` writes one event. */
export function spentReuseHook(record: (ctx: any, input: AuditInput) => Promise<void>) {
  return {
    matcher: (ctx: { path?: string }) => Object.hasOwn(SPENT_ON_USE, ctx.path ?? ""),
    handler: createAuthMiddleware(async (ctx) => {
      const spent = SPENT_ON_USE[ctx.path]!;
      const returned = ctx.context.returned;
      const { internalAdapter } = ctx.context;
      if (!isErrorAnswer(returned)) {
        // Used: by a sign-in (its new session), else by the signed-in user.
        const userId = ctx.context.newSession?.user.id ?? (await spent.userOf(ctx));
        const name = spent.name(ctx, userId);
        if (name) await internalAdapter.createVerificationValue(tombstoneFor(name, userId ?? ""));
        return;
      }
      const userId = await spent.userOf(ctx);
      const name = spent.name(ctx, userId);
      if (!name) return;
      const tombstone = await internalAdapter.findVerificationValue(tombstoneOf(name));
      if (!tombstone) return;
      await record(ctx, {
        type: "credential.reused",
        actorId: null,
        targetId: userId ?? (tombstone.value || null),
        details: {
          method: ctx.path,
          // Better Auth's code; the device flow answers with OAuth's `error` instead.
          reason: reasonOf(returned.body),
          status: returned.statusCode,
        },
      });
    }),
  };
}
