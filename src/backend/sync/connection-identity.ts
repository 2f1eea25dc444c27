/**
 * The identity of one WebSocket connection: its token, the identity steps 1+2 resolved from it
 * (kept current by an {@link IdentityWatch}: re-checked whenever a commit touches what it was
 * resolved from), when the token and the session end, and the gate that holds requests and updates
 * back while a check runs. Answers `connect` / `authenticate` once the check settles.
 */
import type { ServerMessage, WireError } from "../../protocol/messages.ts";
import { tokenExpired } from "../auth/token-clock.ts";
import type { RequestMeta, UserIdentity } from "../functions/define.ts";
import type { Authenticated, Backend } from "../runtime.ts";
import type { ConnectionSubscriptions } from "./connection-subscriptions.ts";
import { type IdentityOwner, IdentityWatch, sameIdentity } from "./identity-watch.ts";
import type { SyncLimits } from "./limits.ts";
import { identityKey, type Principal } from "./query-group.ts";
import type { Reactor } from "./reactor.ts";

/** How soon an identity check that met a database outage runs again (by the sweep). */
const AUTH_RETRY_MS = 1000;

/** What the identity needs from its connection. */
export interface IdentityPort {
  readonly host: { readonly backend: Backend; readonly reactor: Reactor; readonly limits: SyncLimits };
  readonly meta: RequestMeta;
  /** Whether the connection has closed: a check settling afterwards changes nothing. */
  closed(): boolean;
  /** Sends `connected` with the limits of the tier the connection is in now. */
  sendConnected(authenticated: boolean): void;
  sendMessage(message: ServerMessage): void;
}

/** The message a check answers once it settles. */
type Reply = "connect" | "authenticate";

export class ConnectionIdentity implements IdentityOwner {
  token: string | null = null;
  identity: UserIdentity | null = null;
  /** Set after an auth error until the client authenticates again. */
  failed: WireError | null = null;
  private watch: IdentityWatch | null = null;
  /** `exp` of the token (seconds) and the session's end (ms), enforced by the sweep. */
  private tokenExp: number | undefined;
  private sessionEnd: number | undefined;
  private lastAuthAt = 0;
  /** Set while an identity check waits to be retried after a database outage. */
  private authRetryAt: number | undefined;
  /**
   * Replies owed for `connect` / `authenticate` messages still being checked, oldest first: a
   * client that sends `authenticate` before `connected` arrived still gets both answers.
   */
  private replies: Reply[] = [];
  /** While the identity is being (re-)checked: requests wait, updates are held back. */
  private pending: Promise<void> | null = null;
  private releasePending: (() => void) | null = null;

  constructor(
    private readonly port: IdentityPort,
    private readonly subscriptions: ConnectionSubscriptions,
  ) {}

  get host(): IdentityPort["host"] {
    return this.port.host;
  }

  get meta(): RequestMeta {
    return this.port.meta;
  }

  /** Settles when the check in progress does; null when none is. */
  get settling(): Promise<void> | null {
    return this.pending;
  }

  /**
   * What a request (a call or a subscribe) must wait for before it runs as this connection's
   * identity; null when it may run at once. Where other instances share the database (the engine
   * has `syncExternalCommits`), a connection with a token first catches up with every commit made
   * anywhere before the request: delivering one that touches the identity (a revocation, a ban)
   * invalidates the identity watch, and so closes this gate, before the catch-up resolves; the
   * request then waits for that re-check like for any other (PostgreSQL shares one catch-up round
   * among every request of the instance that arrives before it starts). Without
   * `syncExternalCommits` (SQLite in one process) this is the plain gate: nothing to wait for
   * unless a check is settling.
   */
  whenCurrent(): Promise<void> | null {
    const syncing = this.token ? this.port.host.backend.engine.syncExternalCommits?.() : undefined;
    if (!syncing && !this.pending) return null;
    return this.untilCurrent(syncing);
  }

  private async untilCurrent(syncing: Promise<void> | undefined): Promise<void> {
    if (syncing) await syncing;
    // A settling check releases its waiters, and another commit may close the gate again before
    // they resume: the identity is only read through an open gate.
    for (let pending = this.pending; pending; pending = this.pending) await pending;
  }

  /** Who the connection's queries and calls run as. */
  principal(): Principal {
    return { identity: this.identity, token: this.token };
  }

  /**
   * Takes the token of a `connect` or `authenticate` message: a token is checked (steps 1 and 2)
   * and `reply` answered when the check settles; without one (null or empty) the connection is
   * anonymous at once: no identity to watch, its queries move to the anonymous groups.
   */
  authenticate(token: string | null, reply: Reply): void {
    this.token = token;
    if (token) {
      this.replies.push(reply);
      if (this.watch) {
        this.port.host.reactor.invalidate(this.watch);
      } else {
        this.watch = new IdentityWatch(this);
        this.port.host.reactor.add(this.watch);
      }
      return;
    }
    this.stopWatching();
    const hadIdentity = this.identity !== null;
    this.identity = null;
    this.failed = null;
    this.tokenExp = this.sessionEnd = undefined;
    if (hadIdentity) this.subscriptions.rejoinAll();
    this.replies.push(reply);
    this.answer(false);
    this.release();
  }

  holdUpdates(): void {
    this.subscriptions.hold();
    if (!this.pending) this.pending = new Promise((resolve) => (this.releasePending = resolve));
  }

  /** Sends the updates held back and lets waiting requests run. */
  release(): void {
    this.subscriptions.release();
    const done = this.releasePending;
    this.pending = null;
    this.releasePending = null;
    done?.();
  }

  authSucceeded(auth: Authenticated): void {
    if (this.port.closed()) return;
    const before = this.identity;
    const keyChanged = identityKey(before) !== identityKey(auth.identity);
    const changed = !sameIdentity(before, auth.identity);
    this.identity = auth.identity;
    this.failed = null;
    this.tokenExp = auth.expiresAt;
    const end = (auth.identity as { sessionExpiresAt?: unknown }).sessionExpiresAt;
    this.sessionEnd = typeof end === "number" ? end : undefined;
    this.lastAuthAt = Date.now();
    if (keyChanged) this.subscriptions.rejoinAll();
    else if (changed) this.subscriptions.refreshPrincipal();
    this.answer(true);
    this.release();
  }

  /**
   * The identity check met a database outage: updates stay held (a revocation may be behind it)
   * and the server's sweep runs the check again from {@link AUTH_RETRY_MS} on.
   */
  authUnavailable(): void {
    if (this.port.closed()) return;
    this.holdUpdates();
    this.authRetryAt = Date.now() + AUTH_RETRY_MS;
  }

  /** Ends the identity: pushes the auth error and stops every subscription of this connection. */
  authFailed(error: WireError): void {
    if (this.port.closed()) return;
    this.stopWatching();
    this.subscriptions.leaveAll();
    this.subscriptions.discardHeld();
    this.identity = null;
    this.tokenExp = this.sessionEnd = undefined;
    this.failed = error;
    // `auth_error` answers the authentication; a pending handshake still gets its `connected`.
    if (this.replies.includes("connect")) this.port.sendConnected(false);
    this.replies = [];
    this.port.sendMessage({ type: "auth_error", ...error });
    this.release();
  }

  private answer(authenticated: boolean): void {
    for (const reply of this.replies) {
      if (reply === "connect") this.port.sendConnected(authenticated);
      else this.port.sendMessage({ type: "authenticated", authenticated });
    }
    this.replies = [];
  }

  /**
   * Re-runs steps 1 and 2 now (e.g. the signing keys changed): a token the new configuration
   * refuses ends the identity with an auth error, like a revocation.
   */
  recheck(): void {
    if (this.identity && this.watch) this.port.host.reactor.invalidate(this.watch);
  }

  /** Called by the connection's sweep: a retry after an outage, token and session expiry. */
  sweep(now: number): void {
    if (this.authRetryAt !== undefined && this.watch && now >= this.authRetryAt) {
      this.authRetryAt = undefined;
      this.port.host.reactor.invalidate(this.watch);
      return;
    }
    if (!this.identity || !this.watch) return;
    const l = this.port.host.limits;
    if (this.tokenExp !== undefined && tokenExpired(this.tokenExp, now)) {
      this.authFailed({ code: "UNAUTHORIZED", message: "Token expired" });
    } else if (this.sessionEnd !== undefined && now >= this.sessionEnd) {
      this.port.host.reactor.invalidate(this.watch); // the resolver refuses the expired session
    } else if (l.identityRecheckMs > 0 && now - this.lastAuthAt > l.identityRecheckMs) {
      this.lastAuthAt = now;
      this.port.host.reactor.invalidate(this.watch);
    }
  }

  /** Stops re-checking the identity (it ended, or the connection closed). */
  stopWatching(): void {
    if (this.watch) this.port.host.reactor.remove(this.watch);
    this.watch = null;
  }
}
