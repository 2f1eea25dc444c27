/**
 * Better Auth's `runInBackgroundOrAwait` with one change: a mail failure the request must answer
 * with (mail/unavailable.ts) is rethrown instead of logged, so it ends the request; inside
 * sign-up's transaction, the user, account and session are then not kept.
 */
import { isAnsweredMailFailure } from "../../mail/unavailable.ts";

/** The part of Better Auth's context this wraps (1.7 types its result `unknown`). */
export interface BackgroundContext {
  runInBackgroundOrAwait(promise: unknown): unknown;
  options: { advanced?: { backgroundTasks?: { handler?: unknown } } };
}

/** The context override the `backend` plugin's `init` returns. */
export function answeringMailFailures(ctx: BackgroundContext): {
  runInBackgroundOrAwait(promise: unknown): Promise<unknown>;
} {
  const original = ctx.runInBackgroundOrAwait.bind(ctx);
  return {
    async runInBackgroundOrAwait(promise) {
      // With the app's own background handler the request does not wait for the mail: nothing to answer.
      if (ctx.options.advanced?.backgroundTasks?.handler) return original(promise);
      try {
        await promise;
      } catch (error) {
        if (isAnsweredMailFailure(error)) throw error;
        // Better Auth's own handling: logged, the request goes on.
        await original(Promise.reject(error));
      }
    },
  };
}
