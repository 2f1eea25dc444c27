/** Who calls a function and how, as the transports (HTTP, WebSocket, CLI) hand it to the runtime. */
import type { Stamp } from "./commits/commits.ts";
import type { RequestMeta, UserIdentity } from "./functions/define.ts";
import type { ReadTransaction } from "./storage/engine.ts";
import type { TraceParent } from "./tracing/tracing.ts";

/** A function call's transaction and the stamp taken before it began (step 2 may read in it). */
export interface CallTransaction {
  tx: ReadTransaction;
  stamp: Stamp;
}

/** Who is calling and how; built by the transports. */
export interface Caller {
  /** Bearer token presented by the caller, if any. */
  token?: string | null;
  /** Identity already established (a WebSocket caches it per connection). */
  identity?: UserIdentity | null;
  /**
   * Identity resolved on first use (HTTP actions: routes that never ask never pay for it). A call
   * asking from inside its transaction passes it (`within`): steps 1+2 then read in it.
   */
  lazyIdentity?: (within?: CallTransaction) => Promise<UserIdentity | null>;
  meta?: RequestMeta;
  /** CLI and server-internal calls may run internal functions. */
  allowInternal?: boolean;
  /** The call's recording span (set by a transport when an OpenTelemetry SDK records it). */
  trace?: TraceParent;
}
