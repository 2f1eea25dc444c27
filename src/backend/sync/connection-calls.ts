/**
 * The function calls of one WebSocket connection (`query` / `mutation` / `action` messages): the
 * in-flight limit, the wait for a current identity (caught up with other instances' commits, no
 * check settling; see {@link ConnectionIdentity.whenCurrent}), read-your-writes (a mutation's result
 * is sent after the connection's subscriptions show its commit) and the close at shutdown once the
 * last call has answered.
 */
import { CloseCode } from "../../protocol/close-codes.ts";
import type { CallMessage, Outcome, RequestId, ServerMessage } from "../../protocol/messages.ts";
import type { RequestMeta } from "../functions/define.ts";
import { observeCall, outcomeOf } from "../metrics/metrics.ts";
import type { Backend, Caller } from "../runtime.ts";
import type { ConnectionIdentity } from "./connection-identity.ts";
import type { ConnectionSubscriptions } from "./connection-subscriptions.ts";
import type { TierLimits } from "./limits.ts";
import { wireError } from "./wire-error.ts";

/** What the calls need from their connection. */
export interface CallsPort {
  readonly backend: Backend;
  readonly meta: RequestMeta;
  /** The limits in force (they follow the connection's tier). */
  tier(): TierLimits;
  sendMessage(message: ServerMessage): void;
  close(code: number, reason: string): void;
}

export class ConnectionCalls {
  private inFlight = 0;
  /** Set at shutdown: the connection closes with 1001 once its calls in flight have answered. */
  private goingAway: string | null = null;

  constructor(
    private readonly port: CallsPort,
    private readonly identity: ConnectionIdentity,
    private readonly subscriptions: ConnectionSubscriptions,
  ) {}

  /**
   * Shutdown: closes with 1001 (`reason`) as soon as no call is in flight, so every call the
   * server accepted gets its result first. Calls arriving meanwhile still run.
   */
  closeWhenIdle(reason: string): void {
    this.goingAway = reason;
    if (this.inFlight === 0) this.port.close(CloseCode.GOING_AWAY, reason);
  }

  /** Runs one call and sends its `result`. */
  async call(message: CallMessage): Promise<void> {
    const { id, path, args } = message;
    const max = this.port.tier().maxInFlight;
    if (this.inFlight >= max) {
      return this.sendResult(id, {
        error: { code: "TOO_MANY_REQUESTS", message: `At most ${max} requests in flight` },
      });
    }
    this.inFlight++;
    const startedAt = performance.now();
    const fn = this.port.backend.functionLabel(path);
    try {
      // Revocation takes effect on the next request, also one made on another instance.
      const current = this.identity.whenCurrent();
      if (current) await current;
      if (this.identity.failed) {
        observeCall("ws", message.type, fn, this.identity.failed.code, startedAt);
        return this.sendResult(id, { error: this.identity.failed });
      }
      const backend = this.port.backend;
      const caller: Caller = { ...this.identity.principal(), meta: this.port.meta };
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
      observeCall("ws", message.type, fn, "ok", startedAt);
      this.sendResult(id, { value });
    } catch (e) {
      observeCall("ws", message.type, fn, outcomeOf(e), startedAt);
      this.sendResult(id, { error: wireError(e) });
    } finally {
      if (--this.inFlight === 0 && this.goingAway !== null)
        this.port.close(CloseCode.GOING_AWAY, this.goingAway);
    }
  }

  private sendResult(id: RequestId, body: Outcome): void {
    this.port.sendMessage({ type: "result", id, ...body });
  }

  /**
   * Resolves once every subscription has been pushed commits up to `seq` and no check is settling.
   * A check the write started (the caller renamed, signed out) may re-run or move subscriptions
   * as it settles: their new results come before the answer too.
   */
  private async whenFresh(seq: number): Promise<void> {
    await this.subscriptions.whenFresh(seq);
    const settling = this.identity.settling;
    if (settling) {
      await settling;
      await this.subscriptions.whenFresh(seq);
    }
  }
}
