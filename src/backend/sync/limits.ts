/**
 * The sync endpoint's limits and timeouts (docs/protocol.md "Limits and close codes"): per
 * connection, tighter for a connection without an identity, and server-wide byte budgets, so
 * hostile clients cannot make the server hold more memory than these add up to.
 */

/** The limits that differ between a connection with an identity and one without. */
export interface TierLimits {
  maxSubscriptions: number;
  /** Bytes of the `subscribe` messages (path and args) of the subscriptions a connection holds. */
  maxSubscriptionBytes: number;
  /** Queries, mutations and actions awaiting their result. */
  maxInFlight: number;
  /**
   * Bytes of received messages not answered yet: calls in flight and subscribes waiting for the
   * connection's identity check. At least `maxMessageBytes`, or a largest message never fits.
   */
  maxPendingBytes: number;
  /** Close a client that does not read its messages once this much is queued. */
  maxBufferedBytes: number;
}

export interface SyncLimits extends TierLimits {
  /** Largest accepted frame; larger ones close the socket with 1009. */
  maxMessageBytes: number;
  /**
   * Limits of a connection without an identity (before it authenticates, or anonymous); each
   * only tightens the general limit of the same name.
   */
  anonymous: TierLimits;
  /** Server-wide: bytes of every connection's subscriptions and pending messages. */
  maxTotalBytes: number;
  /** Server-wide: the part of `maxTotalBytes` connections without an identity may hold. */
  maxAnonymousTotalBytes: number;
  /** Server-wide: unread output queued for all clients; past it the largest queues are closed. */
  maxTotalBufferedBytes: number;
  /** Open connections from one client address (IPv6: one /64); more are closed with 4029. */
  maxConnectionsPerAddress: number;
  /** Close a connection that sent nothing (not even a ping) for this long. */
  idleTimeoutMs: number;
  /** Close a connection that did not send `connect` within this time. */
  handshakeTimeoutMs: number;
  /** Malformed messages tolerated before the connection is closed with 4000. */
  maxProtocolErrors: number;
  /** Re-run the identity resolver at least this often (0: only when its reads change). */
  identityRecheckMs: number;
}

const MiB = 1024 * 1024;

/** The defaults of `attachSync` / `startService({ sync })`, as docs/protocol.md lists them. */
export const DEFAULT_LIMITS: SyncLimits = {
  maxMessageBytes: MiB,
  maxSubscriptions: 1000,
  maxSubscriptionBytes: 16 * MiB,
  maxInFlight: 64,
  maxPendingBytes: 16 * MiB,
  maxBufferedBytes: 16 * MiB,
  anonymous: {
    maxSubscriptions: 100,
    maxSubscriptionBytes: MiB,
    maxInFlight: 16,
    maxPendingBytes: 2 * MiB,
    maxBufferedBytes: 4 * MiB,
  },
  maxTotalBytes: 256 * MiB,
  maxAnonymousTotalBytes: 64 * MiB,
  maxTotalBufferedBytes: 256 * MiB,
  maxConnectionsPerAddress: 256,
  idleTimeoutMs: 60_000,
  handshakeTimeoutMs: 10_000,
  maxProtocolErrors: 20,
  identityRecheckMs: 5 * 60_000,
};

/** Limits as options give them: any subset, the anonymous ones too. */
export type SyncLimitOptions = Partial<Omit<SyncLimits, "anonymous">> & { anonymous?: Partial<TierLimits> };

const TIER_KEYS = Object.keys(DEFAULT_LIMITS.anonymous) as (keyof TierLimits)[];

/** The limits in force: the defaults overridden by every numeric option given. */
export function resolveLimits(options: SyncLimitOptions): SyncLimits {
  const limits: SyncLimits = { ...DEFAULT_LIMITS, anonymous: { ...DEFAULT_LIMITS.anonymous } };
  for (const k of Object.keys(DEFAULT_LIMITS) as (keyof SyncLimits)[]) {
    const value = options[k as keyof SyncLimitOptions];
    if (k !== "anonymous" && typeof value === "number")
      (limits as unknown as Record<string, number>)[k] = value;
  }
  for (const k of TIER_KEYS) {
    const value = options.anonymous?.[k];
    if (typeof value === "number") limits.anonymous[k] = value;
  }
  return limits;
}

/** The limits of one tier: the anonymous tier takes the smaller of its own and the general limit. */
export function tierLimits(limits: SyncLimits, anonymous: boolean): TierLimits {
  if (!anonymous) return limits;
  const out = { ...limits.anonymous };
  for (const k of TIER_KEYS) out[k] = Math.min(out[k], limits[k]);
  return out;
}
