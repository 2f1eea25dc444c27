/**
 * The subscriptions of one WebSocket connection: joining and leaving the shared query groups, the
 * bytes each subscription holds in the budgets, moving them when the caller changes, and holding
 * updates back while the connection's identity is being checked.
 */
import type { RequestId, ServerMessage, SubscribeMessage, WireError } from "../../protocol/messages.ts";
import type { RegisteredFunction } from "../functions/registered.ts";
import { parseArgs } from "../functions/registry.ts";
import { BytePool, type Reservation } from "./budget.ts";
import type { TierLimits } from "./limits.ts";
import type { Principal, QueryGroups, Subscriber, Subscription } from "./query-group.ts";
import type { Reactor } from "./reactor.ts";
import { wireError } from "./wire-error.ts";

/** What the subscriptions need from their connection. */
export interface SubscriptionsConnection {
  /** The query registered at `path`, or a 404 error. */
  lookup(path: string): RegisteredFunction;
  readonly groups: QueryGroups;
  readonly reactor: Reactor;
  /** The limits in force (they follow the connection's tier). */
  tier(): TierLimits;
  /** Who the queries run as. */
  principal(): Principal;
  /** Takes `bytes` from `pool` and from the server-wide pools. */
  reserve(bytes: number, pool: BytePool): Reservation | undefined;
  /** Sends a pre-serialized message. */
  send(text: string): void;
  sendMessage(message: ServerMessage): void;
  sendError(id: RequestId | undefined, error: WireError): void;
}

export class ConnectionSubscriptions implements Subscriber {
  private readonly subs = new Map<RequestId, Subscription>();
  /** The bytes each subscription holds in the budgets, given back when it ends. */
  private readonly subBytes = new Map<RequestId, Reservation>();
  // The ceiling follows the tier: a connection gets the wider limits once it has an identity.
  private readonly pool = new BytePool(() => this.connection.tier().maxSubscriptionBytes);
  /** Updates held back while the identity is being (re-)checked: the newest body per subscription. */
  private held: Map<Subscription, string> | null = null;

  constructor(private readonly connection: SubscriptionsConnection) {}

  get count(): number {
    return this.subs.size;
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
    this.connection.send(`{"type":"update","id":${sub.idJson},${body.slice(1)}`);
  }

  /** Holds updates back until {@link release} or {@link discardHeld}. */
  hold(): void {
    this.held ??= new Map();
  }

  /** Stops holding updates and sends the held ones of the subscriptions still open. */
  release(): void {
    const held = this.held;
    this.held = null;
    if (held) for (const [sub, body] of held) if (this.subs.get(sub.id) === sub) this.deliver(sub, body);
  }

  /** Stops holding updates and drops the held ones (the identity ended). */
  discardHeld(): void {
    this.held = null;
  }

  /**
   * Joins the query group of `message`; `size` is the message's length as received, `pending` the
   * bytes it holds until answered (moved to the subscription when it is kept).
   */
  subscribe(message: SubscribeMessage, size: number, pending: Reservation | undefined): void {
    if (this.subs.has(message.id)) {
      this.connection.sendError(message.id, {
        code: "DUPLICATE_ID",
        message: "Subscription id already in use",
      });
      return;
    }
    const max = this.connection.tier().maxSubscriptions;
    if (this.subs.size >= max) {
      this.connection.sendError(message.id, {
        code: "TOO_MANY_SUBSCRIPTIONS",
        message: `At most ${max} subscriptions per connection${this.connection.principal().identity ? "" : " before authenticating"}`,
      });
      return;
    }
    // A subscription that can never run (no such query, arguments its validator refuses) is
    // answered with its error and not kept: holding it would cost memory for nothing.
    try {
      parseArgs(this.connection.lookup(message.path), message.args);
    } catch (e) {
      this.connection.sendMessage({ type: "update", id: message.id, error: wireError(e) });
      return;
    }
    // The message's bytes move from pending to the subscription: not counted twice.
    pending?.release();
    const held = this.connection.reserve(size, this.pool);
    if (!held) {
      this.connection.sendError(message.id, {
        code: "BUDGET_EXCEEDED",
        message: "The connection's (or the server's) subscriptions hold too many bytes",
      });
      return;
    }
    this.subBytes.set(message.id, held);
    this.subs.set(
      message.id,
      this.connection.groups.join(this, message.id, message.path, message.args, this.connection.principal()),
    );
  }

  /** Ends subscription `id`, if there is one. */
  unsubscribe(id: RequestId): void {
    const sub = this.subs.get(id);
    if (sub) this.leave(sub);
  }

  /** Ends one subscription and gives its bytes back. */
  private leave(sub: Subscription): void {
    this.subs.delete(sub.id);
    this.held?.delete(sub);
    this.connection.groups.leave(sub);
    this.subBytes.get(sub.id)?.release();
    this.subBytes.delete(sub.id);
  }

  leaveAll(): void {
    for (const sub of [...this.subs.values()]) this.leave(sub);
  }

  /** The identity key changed (another user, or anonymous): move every subscription. */
  rejoinAll(): void {
    const subs = [...this.subs.values()];
    this.subs.clear();
    for (const sub of subs) {
      this.held?.delete(sub);
      this.connection.groups.leave(sub);
      const group = sub.group;
      this.subs.set(
        sub.id,
        this.connection.groups.join(this, sub.id, group.path, group.args, this.connection.principal()),
      );
    }
  }

  /** Same caller, changed identity fields (e.g. a renamed user): re-run the shared queries with it. */
  refreshPrincipal(): void {
    for (const sub of this.subs.values()) {
      sub.group.principal = this.connection.principal();
      this.connection.reactor.invalidate(sub.group);
    }
  }

  /** Resolves once every subscription has been pushed commits up to `seq`. */
  async whenFresh(seq: number): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const sub of this.subs.values()) {
      if (sub.group.dirty || sub.group.running) waits.push(this.connection.reactor.whenFresh(sub.group, seq));
    }
    if (waits.length) await Promise.all(waits);
  }
}
