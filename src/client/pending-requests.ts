/**
 * The client's one-shot calls (query, mutation, action) awaiting their `result`: queued until the
 * connection is ready, re-sent after a reconnect when that is safe, failed when it is not.
 */
import type { CallKind, CallMessage, RequestId, ResultMessage } from "../protocol/messages.ts";
import { BackendError, fromWire, isCredentialError } from "./backend-error.ts";
import type { Outbox } from "./outbox.ts";

interface Pending {
  kind: CallKind;
  /** Serialized once, when called: later changes to the args object do not leak into the call. */
  text: string;
  sent: boolean;
  resolve: (value: any) => void;
  reject: (error: BackendError) => void;
}

export class PendingRequests {
  private readonly pending = new Map<RequestId, Pending>();

  constructor(
    private readonly outbox: Outbox,
    /** Ids shared with the live queries: an `error` names either. */
    private readonly nextId: () => number,
  ) {}

  /** Sends the call now if the connection is ready, else when it becomes ready. */
  request(kind: CallKind, path: string, args: unknown): Promise<any> {
    const id = this.nextId();
    const message: CallMessage = { type: kind, id, path, args: (args ?? {}) as Record<string, unknown> };
    const text = JSON.stringify(message);
    return new Promise((resolve, reject) => {
      const p: Pending = { kind, text, sent: false, resolve, reject };
      this.pending.set(id, p);
      if (this.outbox.ready && this.outbox.sendText(text)) p.sent = true;
    });
  }

  /** The connection became ready: sends every call not sent on it yet. */
  sendQueued(): void {
    for (const p of this.pending.values()) if (!p.sent && this.outbox.sendText(p.text)) p.sent = true;
  }

  /**
   * A `result` settles its call, except a credential error while authentication is being renewed:
   * the call is sent again once authenticated.
   */
  result(m: ResultMessage, renewingAuth: boolean): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    if (!m.error) {
      this.pending.delete(m.id);
      p.resolve(m.value);
      return;
    }
    const error = fromWire(m.error);
    if (isCredentialError(error) && renewingAuth) {
      p.sent = false;
      this.pending.delete(m.id);
      this.pending.set(m.id, p); // to the back of the queue
      return;
    }
    this.pending.delete(m.id);
    p.reject(error);
  }

  /** The server refused call `id` (an `error` message). Returns false when `id` is not a call. */
  refused(id: RequestId, error: BackendError): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    p.reject(error);
    return true;
  }

  /**
   * The socket is gone. Mutations and actions already sent may or may not have run: they fail
   * with CONNECTION_LOST rather than run twice. Queries are sent again.
   */
  connectionLost(): void {
    for (const [id, p] of this.pending) {
      if (p.sent && p.kind !== "query") {
        this.pending.delete(id);
        p.reject(new BackendError("CONNECTION_LOST", `Connection lost before the ${p.kind} result arrived`));
      } else {
        p.sent = false;
      }
    }
  }

  rejectAll(error: BackendError): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }
}
