/** Write access: the auth layer writes only through a mutation ctx, and says so when it has none. */
import { AppError, type MutationCtx } from "service-auth/server";
import type { AnyCtx } from "./types.ts";

/** True when `ctx` can write; a query ctx has a read-only `db`. */
export function isWriteCtx(ctx: AnyCtx): ctx is MutationCtx<any> {
  return typeof (ctx.db as Partial<MutationCtx["db"]>).insert === "function";
}

/** `ctx` as a writer, or a typed `READ_ONLY` error naming what Better Auth tried to write. */
export function requireWriter(ctx: AnyCtx, action: string, model: string): MutationCtx<any> {
  if (!isWriteCtx(ctx)) {
    throw new AppError(
      "READ_ONLY",
      `Better Auth tried to ${action} "${model}" in a query, which cannot write. Call it from a mutation, or use createAuth(ctx) in an action or HTTP route.`,
    );
  }
  return ctx;
}
