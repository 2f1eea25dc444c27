/** `ctx.auth` of a query or mutation, whose identity is settled before the handler runs. */
import type { Auth, UserIdentity } from "./define.ts";

/** `ctx.auth` of every call without identity or token: shared (and frozen) rather than rebuilt per call. */
const ANONYMOUS_AUTH: Auth = Object.freeze({
  getUserIdentity: async () => null,
  getToken: () => null,
});

/**
 * `ctx.auth` answering with `identity` and the bearer `token` it came from. Methods, not arrow
 * properties: tsx names every arrow property with a defineProperty per call, and this runs per
 * authenticated call. The identity's promise is made once, when first asked for (every promise
 * runs async-hook callbacks once Better Auth's AsyncLocalStorage is active).
 */
export function staticAuth(identity: UserIdentity | null, token: string | null): Auth {
  if (identity === null && token === null) return ANONYMOUS_AUTH;
  let answer: Promise<UserIdentity | null> | undefined;
  return {
    getUserIdentity() {
      return (answer ??= Promise.resolve(identity));
    },
    getToken() {
      return token;
    },
  };
}
