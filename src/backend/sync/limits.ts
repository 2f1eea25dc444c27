/** The sync endpoint's per-connection limits and timeouts (docs/protocol.md "Limits and close codes"). */

export interface SyncLimits {
  /** Largest accepted frame; larger ones close the socket with 1009. */
  maxMessageBytes: number;
  maxSubscriptions: number;
  /** Queries, mutations and actions awaiting their result. */
  maxInFlight: number;
  /** Close a connection that sent nothing (not even a ping) for this long. */
  idleTimeoutMs: number;
  /** Close a connection that did not send `connect` within this time. */
  handshakeTimeoutMs: number;
  /** Close a client that does not read its messages once this much is queued. */
  maxBufferedBytes: number;
  /** Malformed messages tolerated before the connection is closed with 4000. */
  maxProtocolErrors: number;
  /** Re-run the identity resolver at least this often (0: only when its reads change). */
  identityRecheckMs: number;
}

/** The defaults of `attachSync` / `startService({ sync })`, as docs/protocol.md lists them. */
export const DEFAULT_LIMITS: SyncLimits = {
  maxMessageBytes: 1024 * 1024,
  maxSubscriptions: 1000,
  maxInFlight: 64,
  idleTimeoutMs: 60_000,
  handshakeTimeoutMs: 10_000,
  maxBufferedBytes: 16 * 1024 * 1024,
  maxProtocolErrors: 20,
  identityRecheckMs: 5 * 60_000,
};
