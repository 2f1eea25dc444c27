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

  constructor(private readonly options: OutageBreakerOptions) {
    this.suspectAfterMs = options.suspectAfterMs ?? 250;
    this.probeIntervalMs = options.probeIntervalMs ?? 500;
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
    logger.info("database reachable again");
    const listeners = [...this.reachable];
    this.reachable.clear();
    for (const listener of listeners) listener();
  }

  private trip(cause: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    logger.warn("database unreachable: refusing requests at once until it answers", {
      error: String(cause),
    });
    for (const refuse of [...this.waiting]) refuse(databaseUnavailable());
    this.recovery = tick("outage_recovery_probe", this.probeIntervalMs, () => {
      if (this.probing) return;
      this.probing = true;
      const timeoutMs = backoffDelayMs(this.probeTimeout, this.slowProbes);
      const startedAt = Date.now();
      return this.options.probe(timeoutMs).then(
        () => {
          this.probing = false;
          this.recover();
        },
        () => {
          this.probing = false;
          // It waited (rather than being refused at once): give the next one longer. Half the
          // deadline, not all of it: a timer may fire a little before the clock says it is due.
          if (Date.now() - startedAt >= timeoutMs / 2) this.slowProbes++;
        },
      );
    });
  }
}
