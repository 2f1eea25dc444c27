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
import type { BackendRuntime, Caller } from "../runtime.ts";
import { endFailed, endSpan, serverSpan, startRequestSpan, withTraceContext } from "../tracing/tracing.ts";
import type { ConnectionIdentity } from "./connection-identity.ts";
import type { ConnectionSubscriptions } from "./connection-subscriptions.ts";
import type { TierLimits } from "./limits.ts";
import { wireError } from "./wire-error.ts";

/** What the calls need from their connection. */
export interface CallsConnection {
  /** Runs the functions (the backend). */
  readonly functions: Pick<
    BackendRuntime,
    "functionLabel" | "runQuery" | "runMutation" | "runAction" | "lastSequence"
  >;
  readonly meta: RequestMeta;
  /** The limits in force (they follow the connection's tier). */
  tier(): TierLimits;
  sendMessage(message: ServerMessage): void;
  close(code: number, reason: string): void;
}

/** Options of a WebSocket call's span. */
const WS_SPAN = serverSpan({ "service_auth.transport": "ws" });

export class ConnectionCalls {
  private inFlight = 0;
  /** Set at shutdown: the connection closes with 1001 once its calls in flight have answered. */
  private goingAway: string | null = null;

  /** Whether a call is running: the client is waiting for us, so the connection is not idle. */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  constructor(
    private readonly connection: CallsConnection,
    private readonly identity: ConnectionIdentity,
    private readonly subscriptions: ConnectionSubscriptions,
  ) {}

  /**
   * Shutdown: closes with 1001 (`reason`) as soon as no call is in flight, so every call the
   * server accepted gets its result first. Calls arriving meanwhile still run.
   */
  closeWhenIdle(reason: string): void {
    this.goingAway = reason;
    if (this.inFlight === 0) this.connection.close(CloseCode.GOING_AWAY, reason);
  }

  /** Runs one call and sends its `result`. */
  async call(message: CallMessage): Promise<void> {
    const { id, path } = message;
    const max = this.connection.tier().maxInFlight;
    if (this.inFlight >= max) {
      return this.sendResult(id, {
        error: { code: "TOO_MANY_REQUESTS", message: `At most ${max} requests in flight` },
      });
    }
    this.inFlight++;
    const startedAt = performance.now();
    const fn = this.connection.functions.functionLabel(path);
    // Undefined unless an OpenTelemetry SDK records this call.
    const traced = startRequestSpan(message.type, undefined, WS_SPAN);
    try {
      // Revocation takes effect on the next request, also one made on another instance.
      const current = this.identity.whenCurrent();
      if (current) await current;
      if (this.identity.failed) {
        observeCall("ws", message.type, fn, this.identity.failed.code, startedAt);
        if (traced) endFailed(traced.span, this.identity.failed.code);
        return this.sendResult(id, { error: this.identity.failed });
      }
      const caller: Caller = { ...this.identity.principal(), meta: this.connection.meta };
      let value: unknown;
      if (traced) {
        traced.span.updateName(`${message.type} ${fn}`);
        traced.span.setAttribute("service_auth.function", fn);
        caller.trace = traced;
        value = await withTraceContext(traced, () => this.run(message, caller));
      } else {
        value = await this.run(message, caller);
      }
      observeCall("ws", message.type, fn, "ok", startedAt);
      if (traced) endSpan(traced.span);
      this.sendResult(id, { value });
    } catch (e) {
      observeCall("ws", message.type, fn, outcomeOf(e), startedAt);
      if (traced) endSpan(traced.span, e);
      this.sendResult(id, { error: wireError(e) });
    } finally {
      if (--this.inFlight === 0 && this.goingAway !== null)
        this.connection.close(CloseCode.GOING_AWAY, this.goingAway);
    }
  }

  /** Runs the call's function; a write's answer waits until the subscriptions show it. */
  private async run(message: CallMessage, caller: Caller): Promise<unknown> {
    const { path, args } = message;
    const functions = this.connection.functions;
    if (message.type === "query") return (await functions.runQuery(path, args, caller)).value;
    if (message.type === "mutation") {
      const result = await functions.runMutation(path, args, caller);
      await this.whenFresh(result.sequence);
      return result.value;
    }
    const value = await functions.runAction(path, args, caller);
    await this.whenFresh(functions.lastSequence);
    return value;
  }

  private sendResult(id: RequestId, body: Outcome): void {
    this.connection.sendMessage({ type: "result", id, ...body });
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
