/**
 * One WebSocket connection: the socket, the handshake, reading client messages and dispatching
 * them, and timeouts. Its parts hold the rest, each given what it needs as functions rather than
 * the server: `connection-identity.ts` (who the calls run as: one explicit state, anonymous to
 * refused), `connection-subscriptions.ts` (shared query groups, held updates) and
 * `connection-calls.ts` (function calls, close at shutdown). Small on purpose: a server holds tens
 * of thousands of these, so it keeps no timers of its own (the server's sweep checks deadlines).
 */
import type { WebSocket } from "ws";
import { CloseCode } from "../../protocol/close-codes.ts";
import {
  type ClientMessage,
  type ConnectionLimits,
  PROTOCOL_VERSION,
  ProtocolError,
  parseClientMessage,
  type RequestId,
  type ServerMessage,
  type WireError,
} from "../../protocol/messages.ts";
import type { RequestMeta, UserIdentity } from "../functions/define.ts";
import type { Authenticated, BackendRuntime } from "../runtime.ts";
import { BytePool, type Reservation, reserve, type SyncBudget } from "./budget.ts";
import { ConnectionCalls } from "./connection-calls.ts";
import { ConnectionIdentity } from "./connection-identity.ts";
import { ConnectionSubscriptions } from "./connection-subscriptions.ts";
import type { SyncLimits, TierLimits } from "./limits.ts";
import type { QueryGroups } from "./query-group.ts";
import type { Reactor } from "./reactor.ts";
import { wireError } from "./wire-error.ts";

/** Protocol versions this server speaks; the client names its version in `connect`. */
export const PROTOCOL_VERSIONS: readonly number[] = [PROTOCOL_VERSION];

/** What a connection needs from its server. */
export interface ConnectionServer {
  backend: BackendRuntime;
  /** Steps 1 and 2 for a token. */
  authenticate(token: string, meta: RequestMeta): Promise<Authenticated>;
  /** Catches up with other instances' commits made before now; undefined when nothing to do. */
  catchUp(): Promise<unknown> | undefined;
  reactor: Reactor;
  groups: QueryGroups;
  limits: SyncLimits;
  /** Server-wide byte budgets and the limits of each tier. */
  budget: SyncBudget;
  closed(conn: Connection): void;
}

export class Connection {
  state: "handshake" | "open" | "closed" = "handshake";
  /** Who the connection's calls run as: token, identity, the check in progress. */
  private readonly caller: ConnectionIdentity;
  private readonly subscriptions: ConnectionSubscriptions;
  private readonly calls: ConnectionCalls;
  // The ceiling follows the tier: a connection gets the wider limits once it has an identity.
  private readonly pendingPool = new BytePool(() => this.tier.maxPendingBytes);
  private protocolErrors = 0;
  /** When the socket was accepted, ms since epoch. */
  readonly openedAt = Date.now();
  private lastSeen = this.openedAt;

  constructor(
    readonly server: ConnectionServer,
    private readonly ws: WebSocket,
    readonly meta: RequestMeta,
    /** The client address the server counts this connection under. */
    readonly address: string,
  ) {
    const tier = () => this.tier;
    const sendMessage = (message: ServerMessage) => this.sendMessage(message);
    this.subscriptions = new ConnectionSubscriptions({
      lookup: (path) => server.backend.lookup(path, "query"),
      groups: server.groups,
      reactor: server.reactor,
      tier,
      principal: () => this.caller.principal(),
      reserve: (bytes, pool) => this.reserve(bytes, pool),
      send: (text) => this.send(text),
      sendMessage,
      sendError: (id, error) => this.sendError(id, error),
    });
    this.caller = new ConnectionIdentity(
      {
        authenticate: (token) => server.authenticate(token, meta),
        catchUp: server.catchUp,
        reactor: server.reactor,
        identityRecheckMs: server.limits.identityRecheckMs,
        closed: () => this.state === "closed",
        onReachable: (listener) => {
          const reachability = server.backend.engine?.reachability;
          return reachability?.isDown ? reachability.onReachable(listener) : undefined;
        },
        sendConnected: (authenticated) => this.sendConnected(authenticated),
        sendMessage,
      },
      this.subscriptions,
    );
    this.calls = new ConnectionCalls(
      {
        functions: server.backend,
        meta,
        tier,
        sendMessage,
        close: (code, reason) => this.close(code, reason),
      },
      this.caller,
      this.subscriptions,
    );
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
    return this.subscriptions.count;
  }

  /** The token the connection authenticated with (null: anonymous). */
  get token(): string | null {
    return this.caller.token;
  }

  /** The identity resolved from the token; null while anonymous or refused. */
  get identity(): UserIdentity | null {
    return this.caller.identity;
  }

  /** The limits in force: tighter while the connection has no identity. */
  private get tier(): TierLimits {
    return this.caller.identity ? this.server.budget.identified : this.server.budget.anonymous;
  }

  /** Takes `bytes` from one of this connection's pools and from the server-wide ones. */
  private reserve(bytes: number, pool: BytePool): Reservation | undefined {
    return reserve(bytes, [pool, ...this.server.budget.pools(this.caller.identity === null)]);
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

  private sendConnected(authenticated: boolean): void {
    this.sendMessage({ type: "connected", v: PROTOCOL_VERSION, authenticated, ...this.limitsInfo() });
  }

  /** The limits of the tier the connection is in when `connected` is sent. */
  private limitsInfo(): ConnectionLimits {
    const l = this.server.limits;
    const tier = this.tier;
    return {
      idleTimeoutMs: l.idleTimeoutMs,
      maxMessageBytes: l.maxMessageBytes,
      maxSubscriptions: tier.maxSubscriptions,
      maxInFlight: tier.maxInFlight,
    };
  }

  // ------------------------------------------------------------------------------ lifecycle

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
    this.calls.closeWhenIdle(reason);
  }

  /**
   * Re-runs steps 1 and 2 now (e.g. the signing keys changed): a token the new configuration
   * refuses ends the identity with an auth error, like a revocation.
   */
  recheckIdentity(): void {
    this.caller.recheck();
  }

  /** Called by the server's sweep: idle and handshake timeouts, token and session expiry. */
  sweep(now: number): void {
    const l = this.server.limits;
    if (this.state === "handshake" && now - this.openedAt > l.handshakeTimeoutMs) {
      this.close(CloseCode.HANDSHAKE_REQUIRED, "no connect message");
      return;
    }
    // A client waiting for answers is not idle, however long its calls run (or a loaded server
    // takes to answer them): the idle clock restarts from the last sweep that found one running.
    if (this.calls.busy) this.lastSeen = now;
    else if (l.idleTimeoutMs > 0 && now - this.lastSeen > l.idleTimeoutMs) {
      this.close(CloseCode.IDLE_TIMEOUT, "idle timeout");
      return;
    }
    this.caller.sweep(now);
  }

  private dispose(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.caller.stopWatching();
    this.subscriptions.leaveAll();
    this.subscriptions.discardHeld();
    this.caller.close();
    this.server.closed(this);
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
      if (++this.protocolErrors > this.server.limits.maxProtocolErrors) {
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
    this.caller.authenticate(token, "connect");
  }

  /**
   * Handles one parsed message; `size` is its length in bytes as received, `pending` the bytes it
   * holds until answered. The one switch over {@link ClientMessage}: a new message type fails to
   * compile here until it is handled.
   */
  private async dispatch(message: ClientMessage, size: number, pending?: Reservation): Promise<void> {
    switch (message.type) {
      case "connect":
        this.sendError(undefined, { code: "PROTOCOL_ERROR", message: "Already connected" });
        return;
      case "authenticate":
        this.caller.authenticate(message.token, "authenticate");
        return;
      case "ping":
        this.sendMessage({ type: "pong" });
        return;
      case "unsubscribe": {
        const settling = this.caller.settling;
        if (settling) await settling;
        this.subscriptions.unsubscribe(message.id);
        return;
      }
      case "subscribe": {
        const current = this.caller.whenCurrent();
        if (current) await current;
        if (this.state === "closed") return;
        if (this.caller.failed) return this.sendError(message.id, this.caller.failed);
        this.subscriptions.subscribe(message, size, pending);
        return;
      }
      case "query":
      case "mutation":
      case "action":
        return this.calls.call(message);
      default: {
        const unhandled: never = message;
        throw new Error(`unhandled message ${JSON.stringify(unhandled)}`);
      }
    }
  }
}
