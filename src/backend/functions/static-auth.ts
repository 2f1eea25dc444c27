/** `ctx.auth` of a query or mutation, whose identity is settled before the handler runs. */
import type { Auth, UserIdentity } from "./define.ts";

/** `ctx.auth` of every call without identity or token: shared (and frozen) rather than rebuilt per call. */
const ANONYMOUS_AUTH: Auth = Object.freeze({
  getUserIdentity: async () => null,
  getToken: () => null,
});

/** `ctx.auth` answering with `identity` and the bearer `token` it came from. */
export function staticAuth(identity: UserIdentity | null, token: string | null): Auth {
  if (identity === null && token === null) return ANONYMOUS_AUTH;
  return {
    getUserIdentity: async () => identity,
    getToken: () => token,
  };
}
