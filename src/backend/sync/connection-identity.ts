/**
 * The identity of one WebSocket connection, as one explicit state:
 * - `anonymous`: no token; the connection's queries run in the anonymous groups.
 * - `checking`: steps 1+2 run for `token` (the first check, or a re-check because a commit touched
 *   what the identity was resolved from). Requests wait and updates are held back until it
 *   settles; the identity established before, if any, stays in force meanwhile.
 * - `retrying`: the check met a database outage, which decides nothing: still holding, and the
 *   server's sweep runs the check again at `retryAt`.
 * - `current`: `identity` was resolved from `token` and nothing since touched what it read (an
 *   {@link IdentityWatch} re-checks it when something does); the sweep enforces its ends.
 * - `refused`: the last check refused the token; requests get `error` until the client
 *   authenticates again.
 * Answers `connect` / `authenticate` once the check settles.
 */
import type { ServerMessage, WireError } from "../../protocol/messages.ts";
import { tokenExpired } from "../auth/token-clock.ts";
import type { UserIdentity } from "../functions/define.ts";
import type { Authenticated } from "../runtime.ts";
import type { ConnectionSubscriptions } from "./connection-subscriptions.ts";
import { IdentityWatch, sameIdentity, type WatchedIdentity } from "./identity-watch.ts";
import { identityKey, type Principal } from "./query-group.ts";
import type { Reactor } from "./reactor.ts";

/** How soon an identity check that met a database outage runs again (by the sweep). */
const AUTH_RETRY_MS = 1000;

/** What the identity needs from its connection (which wires in the server's parts). */
export interface IdentityConnection {
  /** Steps 1 and 2 for `token`, with the connection's request meta. */
  authenticate(token: string): Promise<Authenticated>;
  /**
   * Catches up with the commits other instances made before now (`Commits.confirm`); undefined
   * when there is nothing to catch up with.
   */
  catchUp(): Promise<unknown> | undefined;
  /** Runs the identity watch. */
  readonly reactor: Pick<Reactor, "add" | "invalidate" | "remove">;
  /** How often a current identity is re-checked anyway (ms; 0: never). */
  readonly identityRecheckMs: number;
  /** Whether the connection has closed: a check settling afterwards changes nothing. */
  closed(): boolean;
  /**
   * Calls `listener` once when the database's outage breaker sees it answer again; undefined when
   * it is not known down (the sweep's retry is then the only one). Returns the unsubscribe.
   */
  onReachable(listener: () => void): (() => void) | undefined;
  /** Sends `connected` with the limits of the tier the connection is in now. */
  sendConnected(authenticated: boolean): void;
  sendMessage(message: ServerMessage): void;
}

/** The message a check answers once it settles. */
type Reply = "connect" | "authenticate";

/** An identity steps 1+2 established, and when it ends. */
interface Established {
  readonly identity: UserIdentity;
  /** `exp` of the token, seconds. */
  readonly tokenExp: number | undefined;
  /** The session's end, ms since epoch. */
  readonly sessionEnd: number | undefined;
  /** When it was last checked: the periodic re-check counts from here. */
  checkedAt: number;
}

/** A check not settled yet: what waits for it. */
interface Pending {
  /**
   * Replies owed for `connect` / `authenticate` messages, oldest first: a client that sends
   * `authenticate` before `connected` arrived still gets both answers.
   */
  readonly replies: Reply[];
  /** Requests wait on it; resolves when the check settles. */
  readonly settled: Promise<void>;
  readonly settle: () => void;
}

type IdentityState =
  | { readonly kind: "anonymous" }
  | {
      readonly kind: "checking";
      readonly token: string;
      readonly watch: IdentityWatch;
      readonly established: Established | null;
      readonly pending: Pending;
    }
  | {
      readonly kind: "retrying";
      readonly token: string;
      readonly watch: IdentityWatch;
      readonly established: Established | null;
      readonly pending: Pending;
      readonly retryAt: number;
    }
  | {
      readonly kind: "current";
      readonly token: string;
      readonly watch: IdentityWatch;
      readonly established: Established;
    }
  | { readonly kind: "refused"; readonly token: string; readonly error: WireError };

function newPending(): Pending {
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  return { replies: [], settled, settle };
}

export class ConnectionIdentity implements WatchedIdentity {
  private state: IdentityState = { kind: "anonymous" };
  /** Stops waiting for the database to answer again (a `retrying` check runs then). */
  private unwatchReachable?: () => void;

  constructor(
    private readonly connection: IdentityConnection,
    private readonly subscriptions: ConnectionSubscriptions,
  ) {}

  /** The token the connection authenticated with (null: anonymous); kept when refused. */
  get token(): string | null {
    return this.state.kind === "anonymous" ? null : this.state.token;
  }

  /** The identity in force; null while anonymous, refused, or before a first check passed. */
  get identity(): UserIdentity | null {
    return this.established()?.identity ?? null;
  }

  /** Why the token was refused, while it is. */
  get failed(): WireError | null {
    return this.state.kind === "refused" ? this.state.error : null;
  }

  /** Settles when the check in progress does; null when none is. */
  get settling(): Promise<void> | null {
    return this.pending()?.settled ?? null;
  }

  private established(): Established | null {
    const s = this.state;
    return s.kind === "checking" || s.kind === "retrying" || s.kind === "current" ? s.established : null;
  }

  private pending(): Pending | null {
    const s = this.state;
    return s.kind === "checking" || s.kind === "retrying" ? s.pending : null;
  }

  private watch(): IdentityWatch | null {
    const s = this.state;
    return s.kind === "checking" || s.kind === "retrying" || s.kind === "current" ? s.watch : null;
  }

  /**
   * What a request (a call or a subscribe) must wait for before it runs as this connection's
   * identity; null when it may run at once. Where other instances share the database, a
   * connection with a token first catches up with every commit made anywhere before the request:
   * delivering one that touches the identity (a revocation, a ban) invalidates the identity watch,
   * and so starts a check, before the catch-up resolves; the request then waits for that check
   * like for any other (PostgreSQL shares one catch-up round among every request of the instance
   * that arrives before it starts). In one process this is the plain gate: nothing to wait for
   * unless a check is settling.
   */
  whenCurrent(): Promise<void> | null {
    const catchingUp = this.token ? this.connection.catchUp() : undefined;
    if (!catchingUp && !this.pending()) return null;
    return this.untilCurrent(catchingUp);
  }

  private async untilCurrent(catchingUp: Promise<unknown> | undefined): Promise<void> {
    if (catchingUp) await catchingUp;
    // A settling check releases its waiters, and another commit may start a check again before
    // they resume: the identity is only read once no check is pending.
    for (let pending = this.pending(); pending; pending = this.pending()) await pending.settled;
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
    const pending = this.pending();
    if (token) {
      const watch = this.watch();
      const next = pending ?? newPending();
      next.replies.push(reply);
      if (!pending) this.subscriptions.hold();
      this.state = {
        kind: "checking",
        token,
        watch: watch ?? new IdentityWatch(this, (t) => this.connection.authenticate(t)),
        established: this.established(),
        pending: next,
      };
      if (watch) this.connection.reactor.invalidate(watch);
      else this.connection.reactor.add(this.state.watch);
      return;
    }
    this.stopWatching();
    const hadIdentity = this.identity !== null;
    this.state = { kind: "anonymous" };
    if (hadIdentity) this.subscriptions.rejoinAll();
    this.answer(false, [...(pending?.replies ?? []), reply]);
    this.release(pending);
  }

  /** The watch was invalidated (a commit touched the identity's reads): a check is due. */
  holdUpdates(): void {
    const s = this.state;
    if (s.kind === "current") {
      this.subscriptions.hold();
      this.state = { ...s, kind: "checking", pending: newPending() };
    } else if (s.kind === "retrying") {
      const { retryAt: _, ...rest } = s;
      this.state = { ...rest, kind: "checking" };
    }
  }

  /** Sends the updates held back and lets the requests waiting for `pending` run. */
  private release(pending: Pending | null): void {
    this.subscriptions.release();
    pending?.settle();
  }

  authSucceeded(auth: Authenticated): void {
    if (this.connection.closed()) return;
    const s = this.state;
    if (s.kind !== "checking" && s.kind !== "retrying" && s.kind !== "current") return;
    const before = s.established?.identity ?? null;
    const keyChanged = identityKey(before) !== identityKey(auth.identity);
    const changed = !sameIdentity(before, auth.identity);
    const end = (auth.identity as { sessionExpiresAt?: unknown }).sessionExpiresAt;
    const pending = this.pending();
    this.state = {
      kind: "current",
      token: s.token,
      watch: s.watch,
      established: {
        identity: auth.identity,
        tokenExp: auth.expiresAt,
        sessionEnd: typeof end === "number" ? end : undefined,
        checkedAt: Date.now(),
      },
    };
    if (keyChanged) this.subscriptions.rejoinAll();
    else if (changed) this.subscriptions.refreshPrincipal();
    this.answer(true, pending?.replies ?? []);
    this.release(pending);
  }

  /**
   * The identity check met a database outage: updates stay held (a revocation may be behind it)
   * and the check runs again when the outage breaker sees the database answer, or by the server's
   * sweep from {@link AUTH_RETRY_MS} on, whichever comes first.
   */
  authUnavailable(): void {
    if (this.connection.closed()) return;
    this.holdUpdates();
    const s = this.state;
    if (s.kind !== "checking") return;
    this.state = { ...s, kind: "retrying", retryAt: Date.now() + AUTH_RETRY_MS };
    this.unwatchReachable?.();
    this.unwatchReachable = this.connection.onReachable(() => {
      this.unwatchReachable = undefined;
      this.retry();
    });
  }

  /** Runs a `retrying` check again. */
  private retry(): void {
    this.unwatchReachable?.();
    this.unwatchReachable = undefined;
    const s = this.state;
    if (s.kind !== "retrying" || this.connection.closed()) return;
    const { retryAt: _, ...rest } = s;
    this.state = { ...rest, kind: "checking" };
    this.connection.reactor.invalidate(s.watch);
  }

  /** Ends the identity: pushes the auth error and stops every subscription of this connection. */
  authFailed(error: WireError): void {
    if (this.connection.closed()) return;
    const token = this.token ?? "";
    const pending = this.pending();
    this.stopWatching();
    this.subscriptions.leaveAll();
    this.subscriptions.discardHeld();
    this.state = { kind: "refused", token, error };
    // `auth_error` answers the authentication; a pending handshake still gets its `connected`.
    if (pending?.replies.includes("connect")) this.connection.sendConnected(false);
    this.connection.sendMessage({ type: "auth_error", ...error });
    this.release(pending);
  }

  private answer(authenticated: boolean, replies: readonly Reply[]): void {
    for (const reply of replies) {
      if (reply === "connect") this.connection.sendConnected(authenticated);
      else this.connection.sendMessage({ type: "authenticated", authenticated });
    }
  }

  /**
   * Re-runs steps 1 and 2 now (e.g. the signing keys changed): a token the new configuration
   * refuses ends the identity with an auth error, like a revocation.
   */
  recheck(): void {
    const watch = this.watch();
    if (this.established() && watch) this.connection.reactor.invalidate(watch);
  }

  /** Called by the connection's sweep: a retry after an outage, token and session expiry. */
  sweep(now: number): void {
    const s = this.state;
    if (s.kind === "retrying" && now >= s.retryAt) {
      this.retry();
      return;
    }
    const established = this.established();
    const watch = this.watch();
    if (!established || !watch) return;
    if (established.tokenExp !== undefined && tokenExpired(established.tokenExp, now)) {
      this.authFailed({ code: "UNAUTHORIZED", message: "Token expired" });
    } else if (established.sessionEnd !== undefined && now >= established.sessionEnd) {
      this.connection.reactor.invalidate(watch); // the resolver refuses the expired session
    } else if (
      this.connection.identityRecheckMs > 0 &&
      now - established.checkedAt > this.connection.identityRecheckMs
    ) {
      established.checkedAt = now;
      this.connection.reactor.invalidate(watch);
    }
  }

  /** Stops re-checking the identity (it ended, or the connection closed). */
  stopWatching(): void {
    const watch = this.watch();
    if (watch) this.connection.reactor.remove(watch);
  }

  /**
   * The connection closed: stops watching and lets whatever waits go. A check cut short decides
   * nothing: requests still waiting run as they would have before it (their answers go nowhere).
   */
  close(): void {
    this.unwatchReachable?.();
    this.unwatchReachable = undefined;
    this.stopWatching();
    const s = this.state;
    if (s.kind !== "checking" && s.kind !== "retrying") {
      this.release(null);
      return;
    }
    this.state = s.established
      ? { kind: "current", token: s.token, watch: s.watch, established: s.established }
      : { kind: "anonymous" };
    this.release(s.pending);
  }
}
