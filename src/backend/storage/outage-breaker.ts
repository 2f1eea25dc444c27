/**
 * Fail fast in a database outage. The promise, in two sentences: once a probe of the database
 * (a fresh connection and `SELECT 1` within the ping timeout) has failed, every transaction waiting
 * for it and every new one is refused at once with `503 DATABASE_UNAVAILABLE`, instead of each
 * waiting out the query timeout; the first probe that answers ends the outage. A probe runs when a
 * transaction has waited `suspectAfterMs` without an answer (a busy database answers a probe at
 * once, so slow work is never mistaken for an outage), and every `probeIntervalMs` while down.
 *
 * On a starved machine (CPU, a fork storm) a probe's fresh connection can miss its deadline while
 * the database answers everything else. So any transaction that succeeds is an answer too: one
 * that arrives while a probe runs vetoes that probe's failure, one while down ends the outage; and
 * each probe that failed by its deadline while down gets twice the time the next (up to
 * `maxProbeTimeoutMs`), so a slow but live server is found again. A stopped server refuses the
 * connection at once, and a frozen one that thaws answers the probe already waiting: neither is
 * found later for it.
 *
 * A refused caller's transaction is not cancelled: it ends on its own timeouts, and what it does
 * when it settles (a late commit's publication) still happens. At COMMIT, as for any outage, the
 * caller learns only that the outcome is unknown.
 *
 * One breaker per dependency, and everything that handles an outage of it consults that one:
 * - the primary's (`postgres/engine.ts`, `StorageEngine.reachability`): its refusal is the
 *   `DATABASE_UNAVAILABLE` every caller sees. Live-query retries (`sync/query-group.ts`) and a
 *   WebSocket identity check in its `retrying` state (`sync/connection-identity.ts`, through
 *   `sync/connection.ts`) run again as soon as it sees the database answer; the auth routes
 *   (`src/auth/http.ts`) turn that refusal into their typed 503 (`isUnavailableError`): they sit
 *   above the platform and may not import it, and a 503 needs no wait for the recovery.
 * - each read replica's (`postgres/replica.ts`): a replica whose breaker is down takes no reads
 *   (the primary answers them, so no caller waits on it), a connection fault there trips it at
 *   once ({@link OutageBreaker.failed}), and its recovery probe is the replica's whole check, at
 *   the waits of `RETRY_POLICIES.replicaRest` rather than a fixed period.
 * SQLite has none: a file is not unreachable (a lock held too long is `DATABASE_BUSY`).
 */
import { type BackoffPolicy, backoffDelayMs } from "../../protocol/backoff.ts";
import { logger } from "../logger.ts";
import { RETRY_POLICIES } from "../retry/policies.ts";
import { type Ticking, tick } from "../ticker.ts";
import { databaseUnavailable } from "./db-errors.ts";
import type { Reachability } from "./engine.ts";

export interface OutageBreakerOptions {
  /**
   * Probes the database on a connection of its own; rejects when it does not answer within
   * `timeoutMs` (its own default when undefined: the first probe of a suspicion).
   */
  probe: (timeoutMs?: number) => Promise<void>;
  /** How long a transaction may wait before the database is probed (default 250 ms). */
  suspectAfterMs?: number;
  /** Period of the probe while the database is down (default 500 ms). */
  probeIntervalMs?: number;
  /** The deadline of the first recovery probe (default 1500 ms), doubled after each that ran out. */
  probeTimeoutMs?: number;
  /** The longest recovery probe deadline (default 15 s). */
  maxProbeTimeoutMs?: number;
  /**
   * The probe that ends an outage (default `probe`): a dependency that answers may still be unfit
   * (a read replica no longer a standby); rejects while it is.
   */
  recoveryProbe?: (timeoutMs: number) => Promise<void>;
  /**
   * The waits between recovery probes, longer after each that failed (default: every
   * `probeIntervalMs`). Jitter is ignored: the waits are whole multiples of `firstMs`.
   */
  recovery?: BackoffPolicy;
  /** Called when an outage is found, before the waiting callers are refused. */
  onTrip?: (cause: unknown) => void;
  /** What the logs call the dependency (default "database"), and fields they carry. */
  name?: string;
  logFields?: Record<string, unknown>;
}

export class OutageBreaker implements Reachability {
  private down = false;
  private closed = false;
  private probing = false;
  /** When the last probe started: while up, at most one per `probeIntervalMs`. */
  private probedAt = Number.NEGATIVE_INFINITY;
  private recovery: Ticking | undefined;
  /** Called once when the database answers again (retries waiting for it). */
  private readonly reachable = new Set<() => void>();
  /** Callers waiting on a transaction: refused when an outage is found. */
  private readonly waiting = new Set<(error: Error) => void>();
  private readonly suspectAfterMs: number;
  private readonly probeIntervalMs: number;
  private readonly suspectNow = () => this.suspect();
  /** Transactions that succeeded so far: the database answered them. */
  private answers = 0;
  /** Recovery probes in a row that waited out their deadline: the next one gets longer. */
  private slowProbes = 0;
  private readonly probeTimeout: BackoffPolicy;
  private readonly recoveryWaits: BackoffPolicy;
  /** Recovery probes in a row that failed: the next waits longer (with `recovery`). */
  private failedRecoveries = 0;
  /** Recovery ticks since the last recovery probe. */
  private idleTicks = 0;
  private readonly name: string;

  constructor(private readonly options: OutageBreakerOptions) {
    this.suspectAfterMs = options.suspectAfterMs ?? 250;
    this.probeIntervalMs = options.probeIntervalMs ?? 500;
    const recovery = options.recovery ?? { firstMs: this.probeIntervalMs, maxMs: this.probeIntervalMs };
    this.recoveryWaits = { firstMs: recovery.firstMs, maxMs: recovery.maxMs, jitter: "none" };
    this.name = options.name ?? "database";
    const policy = RETRY_POLICIES.outageProbeTimeout;
    this.probeTimeout = {
      ...policy,
      firstMs: options.probeTimeoutMs ?? policy.firstMs,
      maxMs: options.maxProbeTimeoutMs ?? policy.maxMs,
    };
  }

  /** Whether the last probe failed: the database is known unreachable. */
  get isDown(): boolean {
    return this.down;
  }

  /** Calls `listener` once, when the outage ends (a probe or a transaction answered). */
  onReachable(listener: () => void): () => void {
    const once = () => listener();
    this.reachable.add(once);
    return () => this.reachable.delete(once);
  }

  /**
   * Starts `work` unless the database is known down, and answers with its outcome, or with
   * `DATABASE_UNAVAILABLE` as soon as an outage is found while it waits.
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.down) return Promise.reject(databaseUnavailable());
    const running = work();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(this.suspectNow, this.suspectAfterMs);
      const settle = () => {
        clearTimeout(timer);
        this.waiting.delete(refuse);
      };
      const refuse = (error: Error) => {
        settle();
        reject(error);
      };
      this.waiting.add(refuse);
      running.then(
        (value) => {
          settle();
          this.answered();
          resolve(value);
        },
        (error) => {
          settle();
          reject(error);
        },
      );
    });
  }

  /**
   * The dependency failed outright (a refused or lost connection): the outage begins now, without
   * a probe. For a dependency whose callers have somewhere else to go (a read replica); the
   * primary's callers wait for a probe instead, as a slow answer is not an outage.
   */
  failed(cause: unknown): void {
    this.trip(cause);
  }

  /** Stops probing for good (the engine is closing). */
  close(): void {
    this.closed = true;
    this.stopRecovery();
  }

  private stopRecovery(): void {
    this.recovery?.stop();
    this.recovery = undefined;
  }

  private suspect(): void {
    if (this.closed || this.down || this.probing || Date.now() - this.probedAt < this.probeIntervalMs) return;
    this.probing = true;
    this.probedAt = Date.now();
    const answersBefore = this.answers;
    this.options.probe().then(
      () => {
        this.probing = false;
      },
      (error) => {
        this.probing = false;
        // Something else got an answer meanwhile: the database is slow, not gone.
        if (this.answers !== answersBefore) return;
        this.trip(error);
      },
    );
  }

  /** A transaction succeeded: the database is reachable, whatever a probe said. */
  private answered(): void {
    this.answers++;
    if (this.down) this.recover();
  }

  private recover(): void {
    if (!this.down) return;
    this.down = false;
    this.stopRecovery();
    this.slowProbes = 0;
    this.failedRecoveries = 0;
    logger.info(`${this.name} reachable again`, this.options.logFields);
    const listeners = [...this.reachable];
    this.reachable.clear();
    for (const listener of listeners) listener();
  }

  private trip(cause: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    logger.warn(`${this.name} unreachable: refusing requests at once until it answers`, {
      ...this.options.logFields,
      error: String(cause),
    });
    this.options.onTrip?.(cause);
    for (const refuse of [...this.waiting]) refuse(databaseUnavailable());
    const probe = this.options.recoveryProbe ?? this.options.probe;
    const tickMs = this.recoveryWaits.firstMs;
    this.idleTicks = 0;
    this.recovery = tick("outage_recovery_probe", tickMs, () => {
      if (this.probing) return;
      // Whole ticks: the wait after `failedRecoveries` failed probes, never less than one tick.
      if (++this.idleTicks * tickMs < backoffDelayMs(this.recoveryWaits, this.failedRecoveries)) return;
      this.idleTicks = 0;
      this.probing = true;
      const timeoutMs = backoffDelayMs(this.probeTimeout, this.slowProbes);
      const startedAt = Date.now();
      return probe(timeoutMs).then(
        () => {
          this.probing = false;
          this.recover();
        },
        () => {
          this.probing = false;
          this.failedRecoveries++;
          // It waited (rather than being refused at once): give the next one longer. Half the
          // deadline, not all of it: a timer may fire a little before the clock says it is due.
          if (Date.now() - startedAt >= timeoutMs / 2) this.slowProbes++;
        },
      );
    });
  }
}
