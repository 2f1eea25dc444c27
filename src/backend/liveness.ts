/**
 * Instance liveness, one rule for everything that tells a live process from a dead one through the
 * database: presence's `_instances` heartbeats (`sync/presence.ts`) and the scheduler's job leases
 * (`scheduler/runner.ts`). The rule: a live process renews its mark every `periodMs`; a mark not
 * renewed for {@link MISSED_RENEWALS} periods (`timeoutMs`) belongs to a dead process, whose rows
 * any other process may take over (presence removes its connections, the scheduler recovers its
 * jobs). Three periods, so one slow or failed renewal (a stall, a short outage) is not a death.
 *
 * Presence is configured by its period (`heartbeatMs`, default 10 s: dead after 30 s silent), the
 * scheduler by its timeout (`leaseMs`, default 10 s: renewed every 3.3 s). Presence stores when a
 * mark was renewed, a lease when it runs out (its index finds the expired ones): both are the same
 * rule, {@link isAlive} and {@link expiresAt}.
 */

/** Renewals a process may miss before it is taken for dead. */
export const MISSED_RENEWALS = 3;

/** The shortest renewal period (a tiny timeout in tests must not renew in a busy loop), ms. */
const MIN_PERIOD_MS = 50;

/** How often a process renews its mark, and how long an unrenewed mark stays alive. */
export interface Liveness {
  /** Renew every this many ms. */
  readonly periodMs: number;
  /** Taken for dead after this many ms without a renewal. */
  readonly timeoutMs: number;
}

/** The liveness of marks renewed every `periodMs` (presence's heartbeat). */
export function renewedEvery(periodMs: number): Liveness {
  return { periodMs, timeoutMs: MISSED_RENEWALS * periodMs };
}

/** The liveness of marks that must be renewed within `timeoutMs` (the scheduler's lease). */
export function renewedWithin(timeoutMs: number): Liveness {
  return { periodMs: Math.max(MIN_PERIOD_MS, Math.floor(timeoutMs / MISSED_RENEWALS)), timeoutMs };
}

/** When a mark renewed at `renewedAt` (ms since the epoch) runs out. */
export function expiresAt(liveness: Liveness, renewedAt: number): number {
  return renewedAt + liveness.timeoutMs;
}

/** Whether the process whose mark was renewed at `renewedAt` is alive at `now`. */
export function isAlive(liveness: Liveness, renewedAt: number, now: number): boolean {
  return expiresAt(liveness, renewedAt) >= now;
}
