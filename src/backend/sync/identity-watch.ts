/**
 * Keeps a connection's identity current: authentication steps 1 and 2 re-run whenever a commit
 * touches what the identity was resolved from (its session and user documents).
 */

import type { WireError } from "../../protocol/messages.ts";
import { emptyReadSet, type ReadSet } from "../db/read-write-sets.ts";
import { isUnavailableError } from "../errors.ts";
import type { UserIdentity } from "../functions/define.ts";
import type { Authenticated } from "../runtime.ts";
import { Watch } from "./reactor.ts";
import { wireError } from "./wire-error.ts";

/** The identity the watch keeps current: a connection's (connection-identity.ts). */
export interface WatchedIdentity {
  /** The token to check; a check of a token since replaced reports nothing. */
  readonly token: string | null;
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

  /** @param authenticate steps 1 and 2 for a token (with the connection's request meta). */
  constructor(
    private readonly identity: WatchedIdentity,
    private readonly authenticate: (token: string) => Promise<Authenticated>,
  ) {
    super();
  }

  async execute(): Promise<ReadSet> {
    const token = this.identity.token;
    if (!token) return emptyReadSet();
    try {
      const auth = await this.authenticate(token);
      if (!this.removed && token === this.identity.token) this.succeeded = auth;
      return auth.readSet;
    } catch (e) {
      // An outage decides nothing: neither a refusal (that would sign the user out) nor a pass.
      if (isUnavailableError(e)) {
        if (!this.removed && token === this.identity.token) this.identity.authUnavailable();
        return emptyReadSet();
      }
      // A failure ends the identity at once, even if newer commits are queued: revocation is urgent.
      if (!this.removed && token === this.identity.token) this.identity.authFailed(wireError(e));
      return emptyReadSet();
    }
  }

  onInvalidated(): void {
    this.succeeded = null;
    this.identity.holdUpdates();
  }

  onSettled(): void {
    const auth = this.succeeded;
    this.succeeded = null;
    if (auth) this.identity.authSucceeded(auth);
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
