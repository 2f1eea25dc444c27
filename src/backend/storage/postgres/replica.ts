/**
 * One read replica (a streaming standby of `DATABASE_URL`'s server): its connections, whether it
 * may serve reads now, and waiting until it has replayed a commit.
 *
 * It serves reads only once checked: the same cluster as the primary (system identifier), still
 * a standby, and past this instance's migration in the WAL (so the first reads need not wait for
 * it, `read-freshness.ts`). Its outages are its own outage breaker's (`outage-breaker.ts`): a
 * replica that fails (connection lost, unreachable, no longer a standby) or stops answering rests
 * — takes no reads — until a recovery probe, the whole check, passes again, at the growing waits of
 * `RETRY_POLICIES.replicaRest`. One that could not catch up within a read's wait is "lagging" and
 * skipped until it has replayed what that read needed, so a paused replay costs one wait, not one
 * per read.
 */
import { logger } from "../../logger.ts";
import { RETRY_POLICIES } from "../../retry/policies.ts";
import { maskSettingValue } from "../../settings/mask.ts";
import { StartRefusal } from "../../start-refusal.ts";
import { OutageBreaker } from "../outage-breaker.ts";
import type { PostgresOptions } from "./options.ts";
import { PostgresPools } from "./pools.ts";
import { positionOf, REPLAYED_SQL } from "./read-freshness.ts";

/** How often a replica's replay position is read while a read waits for it, ms. */
const POLL_MS = 2;
/** How often a lagging replica's replay position is read, ms. */
const LAGGING_POLL_MS = 25;
/** A replica not ready yet (migration not replayed) is checked again after this long, ms. */
const RECHECK_MS = 100;

/** What a replica must match before it serves reads; read from the primary after the migration. */
export interface ReplicaGate {
  /** `pg_control_system().system_identifier` of the primary: the same for all its standbys. */
  systemIdentifier: string;
  /** The primary's WAL insert position after this instance's migration. */
  migratedAt: string;
}

/** Why a replica does not serve reads now (`ready` when it does). */
export type ReplicaState = "unchecked" | "ready" | "lagging" | "resting" | "refused";

/** The replica's answer to the check. */
const CHECK_SQL = `SELECT (pg_control_system()).system_identifier::text AS system,
  pg_is_in_recovery() AS recovery,
  coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) AS migrated`;

interface Waiter {
  needs: number;
  timer: NodeJS.Timeout;
  resolve(caughtUp: boolean): void;
}

/** The check found a server that must never serve reads for this primary: the start is refused. */
export class ForeignReplica extends StartRefusal {
  override name = "ForeignReplica";
}

export class Replica {
  readonly pools: PostgresPools;
  /** The URL with its password masked, for logs. */
  readonly label: string;
  /** Down while the replica rests: reads run through it, failures trip it, its probes end the rest. */
  readonly breaker: OutageBreaker;
  /** Where the replica stands when it is not resting. */
  private state: Exclude<ReplicaState, "resting"> = "unchecked";
  private gate?: ReplicaGate;
  private checking?: Promise<void>;
  private nextCheckAt = 0;
  /** The newest WAL position (bytes, `read-freshness.ts`) known replayed here. */
  private replayed = 0;
  /** A WAL position a read could not wait for: skipped until replayed. */
  private lagging?: number;
  private readonly waiters: Waiter[] = [];
  private polling = false;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    url: string,
    options: PostgresOptions,
    /** Position in `DATABASE_READ_URLS`, for messages. */
    readonly index: number,
  ) {
    this.pools = new PostgresPools({ ...options, connectionString: url });
    this.label = maskSettingValue("DATABASE_READ_URLS", url);
    this.breaker = new OutageBreaker({
      probe: (timeoutMs) => this.pools.probe(timeoutMs),
      recoveryProbe: () => this.verified(),
      recovery: RETRY_POLICIES.replicaRest,
      onTrip: () => this.rest(),
      name: "read replica",
      logFields: { replica: this.label },
    });
  }

  /** Whether reads may go here now; starts a check when one is due. */
  get ready(): boolean {
    if (this.breaker.isDown) return false;
    if (this.state === "ready") return true;
    if (this.state === "unchecked" && Date.now() >= this.nextCheckAt) void this.check().catch(() => {});
    return false;
  }

  /** Where the replica stands (metrics, tests). */
  get status(): ReplicaState {
    return this.breaker.isDown && this.state !== "refused" ? "resting" : this.state;
  }

  /**
   * Checks the replica against `gate` (kept for later checks); resolves once done, whatever the
   * outcome. Rejects with {@link ForeignReplica} for a server of another cluster.
   */
  check(gate?: ReplicaGate): Promise<void> {
    if (gate) this.gate = gate;
    if (!this.gate || this.state === "refused" || this.closed) return Promise.resolve();
    this.checking ??= this.runCheck(this.gate).finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async runCheck(gate: ReplicaGate): Promise<void> {
    try {
      await this.verify(gate);
    } catch (error) {
      if (error instanceof ForeignReplica) throw error;
      this.failed(error);
    }
  }

  /** The breaker's recovery probe: rejects while the replica is unfit (and for good once foreign). */
  private async verified(): Promise<void> {
    if (!this.gate) return;
    try {
      await this.verify(this.gate);
    } catch (error) {
      if (error instanceof ForeignReplica) this.breaker.close();
      throw error;
    }
  }

  /**
   * The check: resolves when the replica may serve reads, or (not migrated yet) may be checked again
   * soon; rejects when it is unreachable or not a standby, with {@link ForeignReplica} for a server of
   * another cluster.
   */
  private async verify(gate: ReplicaGate): Promise<void> {
    this.nextCheckAt = Date.now() + RECHECK_MS;
    const [row] = (await this.pools.follower.query(CHECK_SQL, [gate.migratedAt])).rows as {
      system: string;
      recovery: boolean;
      migrated: boolean;
    }[];
    if (row.system !== gate.systemIdentifier) {
      this.state = "refused";
      logger.error("read replica refused: not a standby of DATABASE_URL's server", {
        replica: this.label,
      });
      throw new ForeignReplica(
        `DATABASE_READ_URLS entry ${this.index + 1} (${this.label}) is not a standby of DATABASE_URL's server (another system identifier)`,
      );
    }
    // A promoted standby (or the primary's own address): its log may have gone its own way.
    if (!row.recovery) throw new Error("not a standby (not in recovery)");
    if (!row.migrated) return;
    if (this.state !== "ready") logger.info("read replica serving reads", { replica: this.label });
    this.lagging = undefined;
    this.state = "ready";
  }

  /** The replica failed (connection lost, unreachable, not a standby): it rests (its breaker trips). */
  failed(error: unknown): void {
    if (this.state !== "refused") this.breaker.failed(error);
  }

  /** The breaker tripped: reads waiting here give up, and the replica is checked anew after its rest. */
  private rest(): void {
    if (this.state !== "refused") this.state = "unchecked";
    this.lagging = undefined;
    this.finishWaiters(false);
  }

  /** The replica has replayed up to WAL position `position`. */
  saw(position: number): void {
    if (position > this.replayed) this.replayed = position;
  }

  /**
   * Resolves true once the replica has replayed up to WAL position `needs`, false when `deadline`
   * (`performance.now()` time) passed first or the replica failed; false marks it lagging.
   */
  caughtUp(needs: number, deadline: number): Promise<boolean> {
    if (needs <= this.replayed) return Promise.resolve(true);
    const left = deadline - performance.now();
    if (this.state !== "ready" || left <= 0) return Promise.resolve(this.lag(needs));
    return new Promise((resolve) => {
      const waiter: Waiter = {
        needs,
        // Its own timer: a replica that stops answering must not hold the read past its bound.
        timer: setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          resolve(this.lag(needs));
        }, left),
        resolve,
      };
      this.waiters.push(waiter);
      this.poll();
    });
  }

  /** Marks the replica lagging behind `needs`: skipped, and its position read now and then, until replayed. */
  private lag(needs: number): false {
    if (this.state === "ready" || this.state === "lagging") {
      this.state = "lagging";
      this.lagging = Math.max(this.lagging ?? 0, needs);
      this.poll();
    }
    return false;
  }

  /** Reads the replay position until no read waits and the replica is not lagging. */
  private poll(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    void this.pollOnce();
  }

  private async pollOnce(): Promise<void> {
    try {
      const replayed = positionOf(await this.pools.follower.query(REPLAYED_SQL));
      if (replayed !== undefined) this.saw(replayed);
    } catch (error) {
      this.polling = false;
      this.failed(error);
      return;
    }
    this.polling = false;
    if (this.closed) return;
    if (this.state === "lagging" && this.lagging !== undefined && this.replayed >= this.lagging) {
      this.lagging = undefined;
      this.state = "ready";
    }
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i];
      if (waiter.needs > this.replayed) continue;
      this.waiters.splice(i, 1);
      clearTimeout(waiter.timer);
      waiter.resolve(true);
    }
    if (this.waiters.length || this.state === "lagging") {
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.poll();
        },
        this.waiters.length ? POLL_MS : LAGGING_POLL_MS,
      );
      this.timer.unref();
    }
  }

  private finishWaiters(caughtUp: boolean): void {
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.resolve(caughtUp);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.breaker.close();
    if (this.timer) clearTimeout(this.timer);
    this.finishWaiters(false);
    await this.pools.end();
  }
}
