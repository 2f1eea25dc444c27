/**
 * Byte budgets of the sync server: what connections hold (subscriptions, messages awaiting an
 * answer) is counted against the connection's own ceilings and the server-wide ones, and the
 * connections per client address are counted, so memory stays bounded whatever clients send.
 * Bytes are those of the messages as received; what the server holds for them is a small multiple.
 */
import { type SyncLimits, type TierLimits, tierLimits } from "./limits.ts";

/** A byte ceiling that holders take from and give back to; the ceiling may follow a setting. */
export class BytePool {
  used = 0;
  constructor(readonly limit: () => number) {}
}

/** Bytes taken from some pools; `release` gives them back (once). */
export class Reservation {
  constructor(
    readonly bytes: number,
    private pools: readonly BytePool[],
  ) {}

  release(): void {
    for (const pool of this.pools) pool.used -= this.bytes;
    this.pools = [];
  }
}

/** Takes `bytes` from every pool, or from none when any would exceed its ceiling. */
export function reserve(bytes: number, pools: readonly BytePool[]): Reservation | undefined {
  for (const pool of pools) if (pool.used + bytes > pool.limit()) return undefined;
  for (const pool of pools) pool.used += bytes;
  return new Reservation(bytes, pools);
}

/** The server-wide budgets and the limits of each tier, shared by all connections of a server. */
export class SyncBudget {
  /** Every connection's subscriptions and pending messages. */
  readonly total: BytePool;
  /** The share of {@link total} held by connections without an identity. */
  readonly anonymousTotal: BytePool;
  readonly identified: TierLimits;
  readonly anonymous: TierLimits;
  private readonly perAddress = new Map<string, number>();

  constructor(readonly limits: SyncLimits) {
    this.total = new BytePool(() => limits.maxTotalBytes);
    this.anonymousTotal = new BytePool(() => limits.maxAnonymousTotalBytes);
    this.identified = tierLimits(limits, false);
    this.anonymous = tierLimits(limits, true);
  }

  /** The server-wide pools a connection's reservation draws on. */
  pools(anonymous: boolean): BytePool[] {
    return anonymous ? [this.total, this.anonymousTotal] : [this.total];
  }

  /** Counts a new connection from `address`; false (and not counted) when it has too many. */
  admit(address: string): boolean {
    const open = this.perAddress.get(address) ?? 0;
    if (open >= this.limits.maxConnectionsPerAddress) return false;
    this.perAddress.set(address, open + 1);
    return true;
  }

  /** A connection admitted from `address` closed. */
  leave(address: string): void {
    const open = (this.perAddress.get(address) ?? 0) - 1;
    if (open > 0) this.perAddress.set(address, open);
    else this.perAddress.delete(address);
  }
}
