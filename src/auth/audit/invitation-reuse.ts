/**
 * Refused reuse of an organization invitation (issue 45). An invitation is used by its invitee
 * once: accepting or rejecting it sets its status, and a later accept or reject of it is refused
 * (400 `INVITATION_NOT_FOUND`). Such a refusal while the invitation's status says it was accepted
 * or rejected is recorded as `credential.reused`; a canceled or expired invitation, or an id that
 * never existed, is not a reuse. Nothing about the invitation is stored: its id is the credential.
 */
import { createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import type { AuditInput } from "./events.ts";
import { isErrorAnswer } from "./reuse.ts";

/** The routes that use an invitation. */
export const INVITATION_PATHS: readonly string[] = [
  "/organization/accept-invitation",
  "/organization/reject-invitation",
];

/** The statuses of an invitation its invitee has used. */
const USED = new Set(["accepted", "rejected"]);

/** The audit trail's after-hook on {@link INVITATION_PATHS}; `record` writes one event. */
export function invitationReuseHook(record: (ctx: any, input: AuditInput) => Promise<void>) {
  return {
    matcher: (ctx: { path?: string }) => INVITATION_PATHS.includes(ctx.path ?? ""),
    handler: createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned;
      if (!isErrorAnswer(returned)) return;
      const invitationId = (ctx.body as { invitationId?: unknown } | undefined)?.invitationId;
      if (typeof invitationId !== "string" || invitationId === "") return;
      const invitation = await ctx.context.adapter
        .findOne<{ status?: string }>({ model: "invitation", where: [{ field: "id", value: invitationId }] })
        .catch(() => null);
      if (!USED.has(invitation?.status ?? "")) return;
      const session = ctx.context.session ?? (await getSessionFromCtx(ctx).catch(() => null));
      const userId = session?.user?.id ?? null;
      await record(ctx, {
        type: "credential.reused",
        actorId: userId,
        targetId: userId,
        details: {
          method: ctx.path,
          reason: (returned.body as { code?: string } | undefined)?.code ?? null,
          status: returned.statusCode,
        },
      });
    }),
  };
}
