/**
 * The client's live queries: one server subscription per (path, args value), shared by every local
 * listener of it, re-sent on every new connection and after a renewed authentication.
 */
import type { RequestId, UpdateMessage } from "../protocol/messages.ts";
import { type BackendError, fromWire, isCredentialError } from "./backend-error.ts";
import { queryKey } from "./function-path.ts";
import type { Outbox } from "./outbox.ts";

export interface Listener {
  onUpdate: (value: any) => void;
  onError?: (error: BackendError) => void;
}

/** One server-side subscription, shared by every local listener of the same (path, args). */
interface LiveQuery {
  id: number;
  key: string;
  path: string;
  args: Record<string, unknown>;
  listeners: Set<Listener>;
  hasValue: boolean;
  value: unknown;
  /** Whether the current socket holds this subscription. */
  onServer: boolean;
}

export class LiveQueries {
  private readonly byKey = new Map<string, LiveQuery>();
  private readonly byId = new Map<RequestId, LiveQuery>();

  constructor(
    private readonly outbox: Outbox,
    /** Ids shared with the requests: an `error` names either. */
    private readonly nextId: () => number,
  ) {}

  /**
   * Adds a listener to the query (subscribing when it is the first one); a late listener gets the
   * current value at once. Returns the function that removes it (unsubscribing after the last).
   */
  listen(path: string, args: Record<string, unknown>, listener: Listener): () => void {
    const key = queryKey(path, args);
    let q = this.byKey.get(key);
    if (!q) {
      q = {
        id: this.nextId(),
        key,
        path,
        args,
        listeners: new Set(),
        hasValue: false,
        value: undefined,
        onServer: false,
      };
      this.byKey.set(key, q);
      this.byId.set(q.id, q);
      if (this.outbox.ready) this.sendSubscribe(q);
    } else if (q.hasValue) {
      const value = q.value;
      queueMicrotask(() => listener.onUpdate(value));
    }
    q.listeners.add(listener);
    const live = q;
    return () => {
      live.listeners.delete(listener);
      if (live.listeners.size > 0 || this.byKey.get(key) !== live) return;
      this.byKey.delete(key);
      this.byId.delete(live.id);
      if (live.onServer) this.outbox.send({ type: "unsubscribe", id: live.id });
    };
  }

  /** The server no longer holds any of them (socket gone, or it stopped them on an auth error). */
  detachAll(): void {
    for (const q of this.byKey.values()) q.onServer = false;
  }

  /** Subscribes again to every query the server does not hold. */
  resubscribe(): void {
    for (const q of this.byKey.values()) if (!q.onServer) this.sendSubscribe(q);
  }

  update(m: UpdateMessage): void {
    const q = this.byId.get(m.id);
    if (!q) return;
    if (m.error) {
      this.notifyError(q, fromWire(m.error));
      return;
    }
    q.hasValue = true;
    q.value = m.value;
    for (const l of [...q.listeners]) l.onUpdate(m.value);
  }

  /**
   * The server refused subscription `id`: the query ends with that error, unless the refusal is a
   * credential error while authentication is being renewed (it is resubscribed afterwards).
   * Returns false when `id` is not a live query.
   */
  refused(id: RequestId, error: BackendError, renewingAuth: boolean): boolean {
    const q = this.byId.get(id);
    if (!q) return false;
    q.onServer = false;
    if (isCredentialError(error) && renewingAuth) return true;
    this.notifyError(q, error);
    this.byKey.delete(q.key);
    this.byId.delete(q.id);
    return true;
  }

  /** Stops every live query: the server is told, and every listener gets `error`. */
  stopAll(error: BackendError): void {
    const queries = [...this.byKey.values()];
    this.byKey.clear();
    this.byId.clear();
    for (const q of queries) {
      if (q.onServer) this.outbox.send({ type: "unsubscribe", id: q.id });
      this.notifyError(q, error);
    }
  }

  /** Tells every listener `error` (the client has closed for good). */
  failAll(error: BackendError): void {
    for (const q of this.byKey.values()) this.notifyError(q, error);
  }

  private sendSubscribe(q: LiveQuery): void {
    q.onServer = true;
    this.outbox.send({ type: "subscribe", id: q.id, path: q.path, args: q.args });
  }

  private notifyError(q: LiveQuery, error: BackendError): void {
    for (const l of [...q.listeners]) l.onError?.(error);
  }
}
