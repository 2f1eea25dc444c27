/**
 * One WebSocket connection: handshake, cached identity (re-checked whenever a commit touches what
 * it was resolved from), subscriptions, calls and limits. Small on purpose: a server holds tens of
 * thousands of these, so it keeps no timers of its own (the server's sweep checks deadlines).
 */
import type { WebSocket } from "ws";
import { CloseCode } from "../../protocol/close-codes.ts";
import {
  type CallMessage,
  type ClientMessage,
  type ConnectionLimits,
  type Outcome,
  PROTOCOL_VERSION,
  type RequestId,
  type ServerMessage,
  type WireError,
} from "../../protocol/messages.ts";
import { tokenExpired } from "../auth/token-clock.ts";
import type { RequestMeta, UserIdentity } from "../functions/define.ts";
import { parseArgs } from "../functions/registry.ts";
import type { Authenticated, Backend, Caller } from "../runtime.ts";
import { BytePool, type Reservation, reserve, type SyncBudget } from "./budget.ts";
import { IdentityWatch, sameIdentity } from "./identity-watch.ts";
import type { SyncLimits, TierLimits } from "./limits.ts";
import { PROTOCOL_VERSIONS, ProtocolError, parseClientMessage } from "./protocol.ts";
import { identityKey, type QueryGroups, type Subscriber, type Subscription } from "./query-group.ts";
import type { Reactor } from "./reactor.ts";
import { wireError } from "./wire-error.ts";

/** How soon an identity check that met a database outage runs again (by the sweep). */
const AUTH_RETRY_MS = 1000;

/** What a connection needs from its server. */
export interface ConnectionHost {
  backend: Backend;
  reactor: Reactor;
  groups: QueryGroups;
  limits: SyncLimits;
  /** Server-wide byte budgets and the limits of each tier. */
  budget: SyncBudget;
  closed(conn: Connection): void;
}

export class Connection implements Subscriber {
  state: "handshake" | "open" | "closed" = "handshake";
  token: string | null = null;
  identity: UserIdentity | null = null;
  /** Set after an auth error until the client authenticates again. */
  private failed: WireError | null = null;
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
  private replies: ("connect" | "authenticate")[] = [];
  /** While the identity is being (re-)checked: requests wait, updates are held back. */
  private pending: Promise<void> | null = null;
  private releasePending: (() => void) | null = null;
  private held: Map<Subscription, string> | null = null;
  private readonly subs = new Map<RequestId, Subscription>();
  /** The bytes each subscription holds in the budgets, given back when it ends. */
  private readonly subBytes = new Map<RequestId, Reservation>();
  // Ceilings follow the tier: a connection gets the wider limits once it has an identity.
  private readonly subscriptionPool = new BytePool(() => this.tier.maxSubscriptionBytes);
  private readonly pendingPool = new BytePool(() => this.tier.maxPendingBytes);
  private inFlight = 0;
  /** Set at shutdown: the connection closes with 1001 once its calls in flight have answered. */
  private goingAway: string | null = null;
  private protocolErrors = 0;
  private readonly openedAt = Date.now();
  private lastSeen = this.openedAt;

  constructor(
    readonly host: ConnectionHost,
    private readonly ws: WebSocket,
    readonly meta: RequestMeta,
    /** The client address the server counts this connection under. */
    readonly address: string,
  ) {
    ws.on("message", (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on("close", () => this.dispose());
    // `ws` reports a refused frame (e.g. over `maxMessageBytes`) after it has started the closing
    // handshake with the frame's close code (1009): terminating here would cut the close frame
    // off (1006). Its close timeout ends a peer that never answers; socket errors end themselves.
    ws.on("error", () => {});
  }

  /** The underlying socket (the server terminates stragglers at shutdown). */
  get socket(): WebSocket {
    return this.ws;
  }

  get subscriptionCount(): number {
    return this.subs.size;
  }

  /** The limits in force: tighter while the connection has no identity. */
  private get tier(): TierLimits {
    return this.identity ? this.host.budget.identified : this.host.budget.anonymous;
  }

  /** Takes `bytes` from one of this connection's pools and from the server-wide ones. */
  private reserve(bytes: number, pool: BytePool): Reservation | undefined {
    return reserve(bytes, [pool, ...this.host.budget.pools(this.identity === null)]);
  }

  // ------------------------------------------------------------------------------ sending

  private send(text: string): void {
    if (this.ws.readyState !== 1) return;
    if (this.ws.bufferedAmount > this.tier.maxBufferedBytes) {
      this.close(CloseCode.SLOW_CONSUMER, "client is not reading its messages");
      return;
    }
    this.ws.send(text);
  }

  private sendMessage(message: ServerMessage): void {
    this.send(JSON.stringify(message));
  }

  private sendError(id: RequestId | undefined, error: WireError): void {
    this.sendMessage(id === undefined ? { type: "error", ...error } : { type: "error", id, ...error });
  }

  private sendResult(id: RequestId, body: Outcome): void {
    this.sendMessage({ type: "result", id, ...body });
  }

  private sendConnected(authenticated: boolean): void {
    this.sendMessage({ type: "connected", v: PROTOCOL_VERSION, authenticated, ...this.limitsInfo() });
  }

  /**
   * Subscriber: a group's new result for one of our subscriptions. An `update` message
   * ({@link ServerMessage}) spliced from pre-serialized parts: one result fans out to many sockets.
   */
  deliver(sub: Subscription, body: string): void {
    if (this.held) {
      this.held.set(sub, body);
      return;
    }
    this.send(`{"type":"update","id":${sub.idJson},${body.slice(1)}`);
  }

  close(code: number, reason: string): void {
    if (this.state === "closed") return;
    this.ws.close(code, reason);
    this.dispose();
  }

  /**
   * Shutdown: closes with 1001 (`reason`) as soon as no call is in flight, so every call the
   * server accepted gets its result first. Calls arriving meanwhile still run.
   */
  closeWhenIdle(reason: string): void {
    this.goingAway = reason;
    if (this.inFlight === 0) this.close(CloseCode.GOING_AWAY, reason);
  }

  // ------------------------------------------------------------------------------ identity

  holdUpdates(): void {
    this.held ??= new Map();
    if (!this.pending) this.pending = new Promise((resolve) => (this.releasePending = resolve));
  }

  private release(): void {
    const held = this.held;
    this.held = null;
    if (held) for (const [sub, body] of held) if (this.subs.get(sub.id) === sub) this.deliver(sub, body);
    const done = this.releasePending;
    this.pending = null;
    this.releasePending = null;
    done?.();
  }

  private startAuthentication(): void {
    if (this.watch) {
      this.host.reactor.invalidate(this.watch);
    } else {
      this.watch = new IdentityWatch(this);
      this.host.reactor.add(this.watch);
    }
  }

  authSucceeded(auth: Authenticated): void {
    if (this.state === "closed") return;
    const before = this.identity;
    const keyChanged = identityKey(before) !== identityKey(auth.identity);
    const changed = !sameIdentity(before, auth.identity);
    this.identity = auth.identity;
    this.failed = null;
    this.tokenExp = auth.expiresAt;
    const end = (auth.identity as { sessionExpiresAt?: unknown }).sessionExpiresAt;
    this.sessionEnd = typeof end === "number" ? end : undefined;
    this.lastAuthAt = Date.now();
    if (keyChanged) this.rejoinAll();
    else if (changed) this.refreshPrincipal();
    this.answer(true);
    this.release();
  }

  /**
   * The identity check met a database outage: updates stay held (a revocation may be behind it)
   * and the server's sweep runs the check again from {@link AUTH_RETRY_MS} on.
   */
  authUnavailable(): void {
    if (this.state === "closed") return;
    this.holdUpdates();
    this.authRetryAt = Date.now() + AUTH_RETRY_MS;
  }

  /** Ends the identity: pushes the auth error and stops every subscription of this connection. */
  authFailed(error: WireError): void {
    if (this.state === "closed") return;
    if (this.watch) this.host.reactor.remove(this.watch);
    this.watch = null;
    this.leaveAll();
    this.held = null;
    this.identity = null;
    this.tokenExp = this.sessionEnd = undefined;
    this.failed = error;
    // `auth_error` answers the authentication; a pending handshake still gets its `connected`.
    if (this.replies.includes("connect")) this.sendConnected(false);
    this.replies = [];
    this.sendMessage({ type: "auth_error", ...error });
    this.release();
  }

  private answer(authenticated: boolean): void {
    for (const reply of this.replies) {
      if (reply === "connect") this.sendConnected(authenticated);
      else this.sendMessage({ type: "authenticated", authenticated });
    }
    this.replies = [];
  }

  /** The limits of the tier the connection is in when `connected` is sent. */
  private limitsInfo(): ConnectionLimits {
    const l = this.host.limits;
    const tier = this.tier;
    return {
      idleTimeoutMs: l.idleTimeoutMs,
      maxMessageBytes: l.maxMessageBytes,
      maxSubscriptions: tier.maxSubscriptions,
      maxInFlight: tier.maxInFlight,
    };
  }

  /** Ends one subscription and gives its bytes back. */
  private leave(sub: Subscription): void {
    this.subs.delete(sub.id);
    this.held?.delete(sub);
    this.host.groups.leave(sub);
    this.subBytes.get(sub.id)?.release();
    this.subBytes.delete(sub.id);
  }

  private leaveAll(): void {
    for (const sub of [...this.subs.values()]) this.leave(sub);
  }

  /** The identity key changed (another user, or anonymous): move every subscription. */
  private rejoinAll(): void {
    const subs = [...this.subs.values()];
    this.subs.clear();
    for (const sub of subs) {
      this.held?.delete(sub);
      this.host.groups.leave(sub);
      const group = sub.group;
      this.subs.set(sub.id, this.host.groups.join(this, sub.id, group.path, group.args, this.principal()));
    }
  }

  /** Same caller, changed identity fields (e.g. a renamed user): re-run the shared queries with it. */
  private refreshPrincipal(): void {
    for (const sub of this.subs.values()) {
      sub.group.principal = this.principal();
      this.host.reactor.invalidate(sub.group);
    }
  }

  private principal(): Caller & { identity: UserIdentity | null; token: string | null } {
    return { identity: this.identity, token: this.token };
  }

  /**
   * Re-runs steps 1 and 2 now (e.g. the signing keys changed): a token the new configuration
   * refuses ends the identity with an auth error, like a revocation.
   */
  recheckIdentity(): void {
    if (this.identity && this.watch) this.host.reactor.invalidate(this.watch);
  }

  /** Called by the server's sweep: idle and handshake timeouts, token and session expiry. */
  sweep(now: number): void {
    const l = this.host.limits;
    if (this.state === "handshake" && now - this.openedAt > l.handshakeTimeoutMs) {
      this.close(CloseCode.HANDSHAKE_REQUIRED, "no connect message");
      return;
    }
    if (l.idleTimeoutMs > 0 && now - this.lastSeen > l.idleTimeoutMs) {
      this.close(CloseCode.IDLE_TIMEOUT, "idle timeout");
      return;
    }
    if (this.authRetryAt !== undefined && this.watch && now >= this.authRetryAt) {
      this.authRetryAt = undefined;
      this.host.reactor.invalidate(this.watch);
      return;
    }
    if (!this.identity || !this.watch) return;
    if (this.tokenExp !== undefined && tokenExpired(this.tokenExp, now)) {
      this.authFailed({ code: "UNAUTHORIZED", message: "Token expired" });
    } else if (this.sessionEnd !== undefined && now >= this.sessionEnd) {
      this.host.reactor.invalidate(this.watch); // the resolver refuses the expired session
    } else if (l.identityRecheckMs > 0 && now - this.lastAuthAt > l.identityRecheckMs) {
      this.lastAuthAt = now;
      this.host.reactor.invalidate(this.watch);
    }
  }

  // ------------------------------------------------------------------------------ messages

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.state === "closed") return;
    this.lastSeen = Date.now();
    let message: ClientMessage;
    try {
      if (isBinary) throw new ProtocolError("BAD_MESSAGE", "Binary frames are not supported");
      message = parseClientMessage(data.toString("utf8"));
    } catch (e) {
      const err = e instanceof ProtocolError ? e : new ProtocolError("BAD_MESSAGE", "Unreadable message");
      if (this.state === "handshake") {
        this.close(CloseCode.HANDSHAKE_REQUIRED, "expected a connect message");
        return;
      }
      if (++this.protocolErrors > this.host.limits.maxProtocolErrors) {
        this.close(CloseCode.PROTOCOL_ERROR, "too many malformed messages");
        return;
      }
      this.sendError(err.id, { code: err.code, message: err.message });
      return;
    }
    if (this.state === "handshake") {
      if (message.type !== "connect") this.close(CloseCode.HANDSHAKE_REQUIRED, "expected a connect message");
      else this.onConnect(message.v, message.token ?? null);
      return;
    }
    // Held until answered: a flood of requests (or of subscribes waiting for an identity check)
    // is refused once the connection or the server holds its budget of them.
    let pending: Reservation | undefined;
    if ("id" in message && message.type !== "unsubscribe") {
      pending = this.reserve(data.length, this.pendingPool);
      if (!pending) {
        this.sendError(message.id, {
          code: "BUDGET_EXCEEDED",
          message: "Too many bytes of requests awaiting an answer; wait for some to finish",
        });
        return;
      }
    }
    const size = data.length;
    this.dispatch(message, size, pending)
      .catch((e) => {
        // Every message gets an answer: an unexpected failure as INTERNAL (logged by wireError).
        if (this.state !== "closed") this.sendError("id" in message ? message.id : undefined, wireError(e));
      })
      .finally(() => pending?.release());
  }

  private onConnect(v: number, token: string | null): void {
    if (!PROTOCOL_VERSIONS.includes(v)) {
      this.close(
        CloseCode.UNSUPPORTED_VERSION,
        `unsupported protocol version; server speaks ${PROTOCOL_VERSIONS.join(",")}`,
      );
      return;
    }
    this.state = "open";
    this.token = token;
    if (token) {
      this.replies.push("connect");
      this.startAuthentication();
    } else {
      this.sendConnected(false);
    }
  }

  private onAuthenticate(token: string | null): void {
    this.token = token;
    if (token) {
      this.replies.push("authenticate");
      this.startAuthentication();
      return;
    }
    // Going anonymous: no identity to watch, queries move to the anonymous groups.
    if (this.watch) this.host.reactor.remove(this.watch);
    this.watch = null;
    const hadIdentity = this.identity !== null;
    this.identity = null;
    this.failed = null;
    this.tokenExp = this.sessionEnd = undefined;
    if (hadIdentity) this.rejoinAll();
    this.replies.push("authenticate");
    this.answer(false);
    this.release();
  }

  /**
   * Handles one parsed message; `size` is its length in bytes as received, `pending` the bytes it
   * holds until answered.
   */
  private async dispatch(message: ClientMessage, size: number, pending?: Reservation): Promise<void> {
    switch (message.type) {
      case "connect":
        this.sendError(undefined, { code: "PROTOCOL_ERROR", message: "Already connected" });
        return;
      case "authenticate":
        this.onAuthenticate(message.token);
        return;
      case "ping":
        this.sendMessage({ type: "pong" });
        return;
      case "unsubscribe": {
        if (this.pending) await this.pending;
        const sub = this.subs.get(message.id);
        if (sub) this.leave(sub);
        return;
      }
      case "subscribe": {
        if (this.pending) await this.pending;
        if (this.state === "closed") return;
        if (this.failed) return this.sendError(message.id, this.failed);
        if (this.subs.has(message.id)) {
          return this.sendError(message.id, {
            code: "DUPLICATE_ID",
            message: "Subscription id already in use",
          });
        }
        const max = this.tier.maxSubscriptions;
        if (this.subs.size >= max) {
          return this.sendError(message.id, {
            code: "TOO_MANY_SUBSCRIPTIONS",
            message: `At most ${max} subscriptions per connection${this.identity ? "" : " before authenticating"}`,
          });
        }
        // A subscription that can never run (no such query, arguments its validator refuses) is
        // answered with its error and not kept: holding it would cost memory for nothing.
        try {
          parseArgs(this.host.backend.lookup(message.path, "query"), message.args);
        } catch (e) {
          return this.sendMessage({ type: "update", id: message.id, error: wireError(e) });
        }
        // The message's bytes move from pending to the subscription: not counted twice.
        pending?.release();
        const held = this.reserve(size, this.subscriptionPool);
        if (!held) {
          return this.sendError(message.id, {
            code: "BUDGET_EXCEEDED",
            message: "The connection's (or the server's) subscriptions hold too many bytes",
          });
        }
        this.subBytes.set(message.id, held);
        this.subs.set(
          message.id,
          this.host.groups.join(this, message.id, message.path, message.args, this.principal()),
        );
        return;
      }
      case "query":
      case "mutation":
      case "action":
        return this.call(message);
      default: {
        const unhandled: never = message;
        throw new Error(`unhandled message ${JSON.stringify(unhandled)}`);
      }
    }
  }

  private async call(message: CallMessage): Promise<void> {
    const { id, path, args } = message;
    const max = this.tier.maxInFlight;
    if (this.inFlight >= max) {
      return this.sendResult(id, {
        error: { code: "TOO_MANY_REQUESTS", message: `At most ${max} requests in flight` },
      });
    }
    this.inFlight++;
    try {
      if (this.pending) await this.pending;
      if (this.failed) return this.sendResult(id, { error: this.failed });
      const backend = this.host.backend;
      const caller: Caller = { ...this.principal(), meta: this.meta };
      let value: unknown;
      if (message.type === "query") {
        value = (await backend.runQuery(path, args, caller)).value;
      } else if (message.type === "mutation") {
        const result = await backend.runMutation(path, args, caller);
        value = result.value;
        await this.whenFresh(result.sequence);
      } else {
        value = await backend.runAction(path, args, caller);
        await this.whenFresh(backend.lastSequence);
      }
      this.sendResult(id, { value });
    } catch (e) {
      this.sendResult(id, { error: wireError(e) });
    } finally {
      if (--this.inFlight === 0 && this.goingAway !== null) this.close(CloseCode.GOING_AWAY, this.goingAway);
    }
  }

  /** Resolves once every subscription of this connection has been pushed commits up to `seq`. */
  private async whenFresh(seq: number): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const sub of this.subs.values()) {
      if (sub.group.dirty || sub.group.running) waits.push(this.host.reactor.whenFresh(sub.group, seq));
    }
    if (waits.length) await Promise.all(waits);
    if (this.pending) await this.pending;
  }

  private dispose(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    if (this.watch) this.host.reactor.remove(this.watch);
    this.watch = null;
    this.leaveAll();
    this.held = null;
    this.release();
    this.host.closed(this);
  }
}
