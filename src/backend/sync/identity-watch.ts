/**
 * Keeps a connection's identity current: authentication steps 1 and 2 re-run whenever a commit
 * touches what the identity was resolved from (its session and user documents).
 */

import { emptyReadSet, type ReadSet } from "../db/read-write-sets.ts";
import { isUnavailableError } from "../errors.ts";
import type { RequestMeta, UserIdentity } from "../functions/define.ts";
import type { Authenticated, Backend } from "../runtime.ts";
import type { WireError } from "./protocol.ts";
import { Watch } from "./reactor.ts";
import { wireError } from "./wire-error.ts";

/** The connection side of the watch. */
export interface IdentityOwner {
  /** The token to check; a check of a token since replaced reports nothing. */
  readonly token: string | null;
  readonly meta: RequestMeta;
  readonly host: { readonly backend: Backend };
  /** A commit touched the identity's reads: hold updates back until the check settles. */
  holdUpdates(): void;
  authSucceeded(auth: Authenticated): void;
  authFailed(error: WireError): void;
  /** The database could not answer the check: keep holding updates and check again later. */
  authUnavailable(): void;
}

export class IdentityWatch extends Watch {
  readonly priority = true;
  private succeeded: Authenticated | null = null;

  constructor(private readonly owner: IdentityOwner) {
    super();
  }

  async execute(): Promise<ReadSet> {
    const token = this.owner.token;
    if (!token) return emptyReadSet();
    try {
      const auth = await this.owner.host.backend.authenticate(token, this.owner.meta);
      if (!this.removed && token === this.owner.token) this.succeeded = auth;
      return auth.readSet;
    } catch (e) {
      // An outage decides nothing: neither a refusal (that would sign the user out) nor a pass.
      if (isUnavailableError(e)) {
        if (!this.removed && token === this.owner.token) this.owner.authUnavailable();
        return emptyReadSet();
      }
      // A failure ends the identity at once, even if newer commits are queued: revocation is urgent.
      if (!this.removed && token === this.owner.token) this.owner.authFailed(wireError(e));
      return emptyReadSet();
    }
  }

  onInvalidated(): void {
    this.succeeded = null;
    this.owner.holdUpdates();
  }

  onSettled(): void {
    const auth = this.succeeded;
    this.succeeded = null;
    if (auth) this.owner.authSucceeded(auth);
  }
}

/** Claims that change on every token refresh without changing who the caller is. */
const VOLATILE_CLAIMS = new Set(["exp", "iat", "nbf", "jti"]);

/** Whether two identities are the same apart from the claims every refresh changes. */
export function sameIdentity(a: UserIdentity | null, b: UserIdentity | null): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (VOLATILE_CLAIMS.has(k)) continue;
    if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) return false;
  }
  return true;
}
