/**
 * The advisory layer as Better Auth plugin parts, embedded in the `backend` plugin so every auth
 * of this project has it: refusal at start, secure defaults, database hooks and request guards for
 * the advisories of docs/security.md. Accepting an advisory (`acceptAdvisories`) switches its
 * mitigation off.
 */
import type { BetterAuthOptions, BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { type AcceptedAdvisories, ADVISORY, acceptedAdvisories } from "./catalog.ts";
import { refuseUnpatchedFeatures } from "./refuse.ts";
import { awaitsSecondFactor, type SecondFactorCtx } from "./second-factor.ts";

/** The organization routes that act on an invitation for the signed-in user's email. */
const INVITATION_PATHS: ReadonlySet<string> = new Set([
  "/organization/accept-invitation",
  "/organization/reject-invitation",
  "/organization/get-invitation",
  "/organization/list-user-invitations",
]);

/** The sign-ins that prove control of the mailbox (GHSA-qq9h-g4jm-xgf3). */
const MAILBOX_PROOF_PATHS: ReadonlySet<string> = new Set(["/magic-link/verify", "/sign-in/email-otp"]);

/** The fields a magic-link verification row's value carries (Better Auth 1.4.9). */
const MAGIC_LINK_FIELDS: ReadonlySet<string> = new Set(["email", "name", "attempt"]);

/** True when a verification row's `value` is what `/sign-in/magic-link` stores. */
export function isMagicLinkValue(value: unknown): boolean {
  if (typeof value !== "string") return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return false;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
  const record = parsed as Record<string, unknown>;
  return typeof record.email === "string" && Object.keys(record).every((k) => MAGIC_LINK_FIELDS.has(k));
}

/**
 * The internal adapter calls the hooks make. A user's sessions go with `deleteSessions(userId)` on
 * 1.4 and `deleteUserSessions(userId)` on 1.7, whose `deleteSessions` takes session tokens only.
 */
interface InternalAdapter {
  deleteSessions(userId: string): Promise<unknown>;
  deleteUserSessions?(userId: string): Promise<unknown>;
  deleteAccounts(userId: string): Promise<unknown>;
  findVerificationValue(identifier: string): Promise<{ value: string } | null | undefined>;
}
/** Deletes every session of `userId`, in every store, on either Better Auth line. */
function deleteUserSessions(adapter: InternalAdapter, userId: string): Promise<unknown> {
  return adapter.deleteUserSessions ? adapter.deleteUserSessions(userId) : adapter.deleteSessions(userId);
}

/** The endpoint context a database hook receives (null outside an endpoint). */
type HookCtx = { path?: string; context: { internalAdapter: InternalAdapter } } | null | undefined;

export interface AdvisoryLayer {
  /** Refuses unpatched features, then sets secure defaults and the database hooks. */
  init(ctx: Parameters<NonNullable<BetterAuthPlugin["init"]>>[0]): { options: Partial<BetterAuthOptions> };
  hooks: { before: NonNullable<NonNullable<BetterAuthPlugin["hooks"]>["before"]> };
  /** True when no backend JWT may be minted after this request (second factor pending). */
  withholdsJwt(ctx: SecondFactorCtx): boolean;
}

/** The advisory layer with the given advisories accepted (their mitigations off). */
export function advisoryLayer(accept: AcceptedAdvisories = undefined): AdvisoryLayer {
  const accepted = acceptedAdvisories(accept);
  const on = (id: string) => !accepted.has(id);
  /** Requests of the mailbox-proof paths that are marking their user verified right now. */
  const verifying = new WeakSet<object>();

  const databaseHooks: NonNullable<BetterAuthOptions["databaseHooks"]> = {
    user: {
      delete: {
        // The sessions go before the user, in the same write path (one transaction with the
        // direct adapter); Better Auth 1.4.9 skips them when sessions live in secondary storage.
        before: async (user, ctx) => {
          if (!on(ADVISORY.sessionsAfterUserDelete)) return;
          const adapter = (ctx as HookCtx)?.context.internalAdapter;
          if (adapter) await deleteUserSessions(adapter, user.id);
        },
      },
      update: {
        before: async (data, ctx) => {
          const hook = ctx as HookCtx;
          if (hook && MAILBOX_PROOF_PATHS.has(hook.path ?? "") && data.emailVerified === true)
            verifying.add(hook);
        },
        // Whoever set the password, linked a provider or held a session before the mailbox was
        // proven is not known to own it: drop them all before the verified owner's session is
        // made. A provider link goes too (as in 1.6.22's own fix): with `trustedProviders` or
        // `allowDifferentEmails`, it needs no proof of this email either.
        after: async (user, ctx) => {
          const hook = ctx as HookCtx;
          if (!hook || !verifying.has(hook) || !on(ADVISORY.preAccountHijacking)) return;
          verifying.delete(hook);
          const adapter = hook.context.internalAdapter;
          await adapter.deleteAccounts(user.id);
          await deleteUserSessions(adapter, user.id);
        },
      },
    },
  };

  return {
    init: (ctx) => {
      // 1.6+ reports its version; 1.4.9 does not (the default).
      refuseUnpatchedFeatures(ctx.options, accepted, (ctx as { version?: string }).version);
      // Defaults only: an app's own `account.accountLinking.enabled` wins (defu merge).
      const account = on(ADVISORY.implicitOAuthLinking) ? { accountLinking: { enabled: false } } : undefined;
      return { options: { databaseHooks, ...(account ? { account } : {}) } };
    },
    hooks: {
      before: [
        {
          matcher: (ctx) => on(ADVISORY.unverifiedInvitation) && INVITATION_PATHS.has(ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            const session = await getSessionFromCtx(ctx);
            if (session && session.user.emailVerified !== true) {
              throw new APIError("FORBIDDEN", {
                message: "Verify your email address before using an invitation",
                code: "EMAIL_NOT_VERIFIED",
              });
            }
          }),
        },
        {
          matcher: (ctx) => on(ADVISORY.magicLinkForeignToken) && ctx.path === "/magic-link/verify",
          handler: createAuthMiddleware(async (ctx) => {
            const token = ctx.query?.token;
            if (typeof token !== "string") return;
            const row = await ctx.context.internalAdapter.findVerificationValue(token);
            if (row && !isMagicLinkValue(row.value)) {
              throw new APIError("UNAUTHORIZED", { message: "Invalid token", code: "INVALID_TOKEN" });
            }
          }),
        },
      ],
    },
    withholdsJwt: (ctx) => on(ADVISORY.jwtBeforeSecondFactor) && awaitsSecondFactor(ctx),
  };
}
