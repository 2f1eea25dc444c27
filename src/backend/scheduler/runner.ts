/**
 * The scheduler's runner: one per process, all of them sharing `_scheduled_jobs` through the
 * database. The promises, each kept by one transaction:
 *
 * - A job is claimed (`pending` → `running`, with this runner as owner and a lease) in a
 *   serializable write, so of several runners exactly one gets it (on SQLite through the one
 *   writer, on PostgreSQL through SERIALIZABLE: a concurrent claim conflicts and, retried, finds
 *   the job taken).
 * - A scheduled mutation runs exactly once: its `done` mark is written in the mutation's own
 *   transaction, after checking that the claim is still this runner's. Effects and mark commit
 *   together or not at all; a runner that died mid-run left neither, and its job goes back to
 *   `pending` when the lease runs out.
 * - A scheduled action runs at most once: it is marked `running` before it starts; if its runner
 *   dies, the lease runs out and the job is marked `failed`, never silently run again.
 * - A cron tick is claimed in the transaction that schedules its job and moves the cron's
 *   `nextRun` past now: one run per tick across every runner; missed ticks run once.
 *
 * Leases are renewed while the runner lives, so a slow job is never taken from a live runner: a
 * lease is an instance liveness mark (`liveness.ts`, the rule presence's heartbeats follow too),
 * renewed every third of `leaseMs`.
 * An idle runner only reads: it opens a write transaction when there is something to claim, so
 * it never queues behind (or for) a write lock another process holds.
 */
import { randomUUID } from "node:crypto";
import type { DatabaseReader, DatabaseWriter } from "../db/database.ts";
import { type Commit, commitTables } from "../db/read-write-sets.ts";
import { expiresAt, type Liveness, renewedWithin } from "../liveness.ts";
import { logger } from "../logger.ts";
import { schedulerMetrics, watchScheduler } from "../metrics/metrics.ts";
import { type Ticking, tick } from "../ticker.ts";
import type { CronJob } from "./crons.ts";
import type { JobDocument } from "./tables.ts";

/** What the runner needs of the backend (`BackendRuntime` provides it, service.ts). */
export interface SchedulerHost {
  /** An internal read snapshot (system tables readable). */
  read<T>(fn: (db: DatabaseReader) => Promise<T>): Promise<T>;
  /** An internal write transaction (system tables writable), published like a mutation's. */
  write<T>(fn: (db: DatabaseWriter) => Promise<T>): Promise<T>;
  /** `claim(db)` and, when it returns true, the mutation, in one transaction. */
  runMutationClaimed(
    path: string,
    args: unknown,
    claim: (db: DatabaseWriter) => Promise<boolean>,
  ): Promise<{ ran: boolean; value: unknown }>;
  runAction(path: string, args: unknown): Promise<unknown>;
  /**
   * Calls `listener` after every commit (`unknown`: it may have written anything), as the commits'
   * `scheduler` consumer (commits/consumers.ts); returns the unsubscribe.
   */
  followCommits(listener: (commit: Commit) => void): () => void;
}

/**
 * Tuning of the scheduler that runs `ctx.scheduler` jobs and cron jobs on this instance
 * (`ServiceOptions.scheduler`; `false` runs none here).
 *
 * @example
 * ```ts
 * import { type SchedulerOptions, startService } from "service-auth/server";
 *
 * const scheduler: Omit<SchedulerOptions, "crons"> = { maxConcurrent: 4, runTimeoutMs: 120_000 };
 * await startService({ ...app, scheduler });
 * ```
 */
export interface SchedulerOptions {
  crons?: readonly CronJob[];
  /** Most jobs this runner runs at once (default 10). */
  maxConcurrent?: number;
  /** A run taking longer fails with a timeout (default 60 s; a mutation's transaction may still commit). */
  runTimeoutMs?: number;
  /** How long a claim lasts without renewal (default 10 s): a dead runner's jobs wait this long. */
  leaseMs?: number;
  /** Longest sleep between looks at the queue (default 1 s); commits to the queue wake it sooner. */
  pollMs?: number;
  /** Finished jobs are deleted after this long (default 7 days). */
  retentionMs?: number;
}

const MAX_ERROR_LENGTH = 2000;
const PRUNE_BATCH = 500;
const asJob = (doc: unknown) => doc as JobDocument;
const JOBS = "_scheduled_jobs" as never;
const CRONS = "_cron_jobs" as never;

export class SchedulerRunner {
  /** This runner's id: the owner of the jobs it claims. */
  readonly id = randomUUID();
  private readonly running = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private renewal: Ticking | undefined;
  private cycling: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private lastPrune = 0;
  private lastRecovery = Number.NEGATIVE_INFINITY;
  private nextCronTick = Number.NEGATIVE_INFINITY;
  private unsubscribe: (() => void) | undefined;
  private unwatchMetrics: (() => void) | undefined;
  private readonly maxConcurrent: number;
  private readonly runTimeoutMs: number;
  /** The lease: renewed every `periodMs`, recovered by others once `timeoutMs` passed unrenewed. */
  private readonly lease: Liveness;
  private readonly pollMs: number;
  private readonly retentionMs: number;

  constructor(
    private readonly host: SchedulerHost,
    private readonly options: SchedulerOptions = {},
  ) {
    this.maxConcurrent = options.maxConcurrent ?? 10;
    this.runTimeoutMs = options.runTimeoutMs ?? 60_000;
    this.lease = renewedWithin(options.leaseMs ?? 10_000);
    this.pollMs = options.pollMs ?? 1000;
    this.retentionMs = options.retentionMs ?? 7 * 24 * 3_600_000;
  }

  /** Jobs running in this process now. */
  get active(): number {
    return this.running.size;
  }

  start(): void {
    this.unsubscribe = this.host.followCommits((commit) => {
      if (commit.unknown || commitTables(commit).includes("_scheduled_jobs")) this.wake();
    });
    this.unwatchMetrics = watchScheduler({
      running: () => this.running.size,
      queue: () =>
        this.host.read(async (db) => {
          const pending = (await pendingJobs(db).take(10_000)) as unknown[];
          const oldest = pending.length ? asJob(pending[0]).runAt : undefined;
          return {
            pending: pending.length,
            lagMs: oldest === undefined ? 0 : Math.max(0, Date.now() - oldest),
          };
        }),
    });
    this.renewal = tick("scheduler_lease_renewal", this.lease.periodMs, () => this.renewLeases());
    this.wake();
  }

  /** Stops claiming; waits for the jobs running here until `deadline` (epoch ms). */
  async close(deadline = Date.now()): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unwatchMetrics?.();
    clearTimeout(this.timer);
    await this.cycling;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(this.running.values()),
      new Promise((done) => (timer = setTimeout(done, Math.max(0, deadline - Date.now())))),
    ]);
    clearTimeout(timer);
    this.renewal?.stop();
  }

  /** Looks at the queue now (again after the current look, if one is running). */
  wake(): void {
    if (this.stopped) return;
    if (this.cycling) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.cycling = this.cycle()
      .catch((error) => logger.warn("scheduler: looking at the queue failed", { error: String(error) }))
      .then((nextDue) => {
        this.cycling = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          return this.wake();
        }
        const wait = Math.min(this.pollMs, Math.max(0, (nextDue ?? Number.POSITIVE_INFINITY) - Date.now()));
        // A failed look (nextDue undefined) tries again after the poll period.
        this.timer = setTimeout(() => this.wake(), wait);
        this.timer.unref();
      });
  }

  /** One look: cron ticks, dead runners' jobs, due jobs; resolves with the next due time known. */
  private async cycle(): Promise<number | undefined> {
    const now = Date.now();
    const free = this.maxConcurrent - this.running.size;
    // Crons and dead runners are looked at on their own clock, not on every wake-up.
    const lookAround = now - this.lastRecovery >= this.pollMs;
    const seen = await this.host.read(async (db) => ({
      due: (await pendingJobs(db).take(1)) as unknown[],
      expired: lookAround ? ((await expiredJobs(db, now).take(1)) as unknown[]) : [],
    }));
    if (now >= this.nextCronTick) this.nextCronTick = await this.tickCrons(now);
    if (lookAround) {
      this.lastRecovery = now;
      if (seen.expired.length) await this.recover(now);
    }
    if (now - this.lastPrune > 60_000) {
      this.lastPrune = now;
      await this.prune(now);
    }
    let nextDue = seen.due.length ? asJob(seen.due[0]).runAt : undefined;
    if (free > 0 && nextDue !== undefined && nextDue <= now) {
      const claim = await this.claim(now, free);
      for (const job of claim.claimed) this.track(job);
      nextDue = claim.nextDue;
    }
    // Full: a due job waits for a running one to finish, which wakes the runner (no busy looking).
    if (nextDue !== undefined && nextDue <= now && this.running.size >= this.maxConcurrent)
      nextDue = undefined;
    return Math.min(nextDue ?? Number.POSITIVE_INFINITY, this.nextCronTick, this.lastRecovery + this.pollMs);
  }

  /** Claims the crons' due ticks; resolves with the earliest next tick. */
  private async tickCrons(now: number): Promise<number> {
    const crons = this.options.crons ?? [];
    if (crons.length === 0) return Number.POSITIVE_INFINITY;
    // Read first: a write transaction only when a tick is due or a cron is new or changed.
    const stored = await this.host.read(async (db) => {
      const rows: ({ schedule: string; nextRun: number } | null)[] = [];
      for (const cron of crons) rows.push((await cronRow(db, cron.name)) as never);
      return rows;
    });
    if (stored.every((row, i) => row && row.schedule === crons[i].schedule && row.nextRun > now))
      return Math.min(...stored.map((row) => row?.nextRun ?? Number.POSITIVE_INFINITY));
    return this.host.write(async (db) => {
      let earliest = Number.POSITIVE_INFINITY;
      for (const cron of crons) {
        const row = (await cronRow(db, cron.name)) as {
          _id: string;
          schedule: string;
          nextRun: number;
        } | null;
        if (!row) {
          await db.insert(CRONS, {
            name: cron.name,
            schedule: cron.schedule,
            nextRun: cron.next(now),
          } as never);
        } else if (row.schedule !== cron.schedule) {
          await db.patch(row._id as never, { schedule: cron.schedule, nextRun: cron.next(now) } as never);
        } else if (row.nextRun <= now) {
          // However many ticks were missed, one run, standing for the oldest.
          await db.insert(JOBS, {
            name: cron.path,
            kind: "mutation",
            args: cron.args,
            runAt: row.nextRun,
            state: "pending",
            cron: cron.name,
          } as never);
          await db.patch(row._id as never, { nextRun: cron.next(now) } as never);
        }
        const after = (await cronRow(db, cron.name)) as { nextRun: number } | null;
        earliest = Math.min(earliest, after?.nextRun ?? Number.POSITIVE_INFINITY);
      }
      return earliest;
    });
  }

  /** Jobs whose runner's lease ran out: mutations go back to pending, actions fail. */
  private async recover(now: number): Promise<void> {
    await this.host.write(async (db) => {
      const expired = (await expiredJobs(db, now).take(100)) as unknown[];
      for (const doc of expired) {
        const job = asJob(doc);
        if (job.kind === "mutation") {
          await db.patch(
            job._id as never,
            { state: "pending", owner: undefined, leaseUntil: undefined } as never,
          );
        } else {
          await db.patch(
            job._id as never,
            {
              state: "failed",
              finishedAt: now,
              leaseUntil: undefined,
              error: "The process running this action stopped before it finished; it is not run again",
            } as never,
          );
        }
      }
      if (expired.length)
        logger.warn("scheduler: recovered the jobs of a stopped runner", { jobs: expired.length });
    });
  }

  private async claim(now: number, free: number): Promise<{ claimed: JobDocument[]; nextDue?: number }> {
    return this.host.write(async (db) => {
      const due = (await pendingJobs(db).take(Math.max(free, 0) + 1)) as unknown[];
      const claimed: JobDocument[] = [];
      let nextDue: number | undefined;
      for (const doc of due) {
        const job = asJob(doc);
        if (job.runAt > now || claimed.length >= free) {
          nextDue = job.runAt;
          break;
        }
        const lease = {
          state: "running",
          owner: this.id,
          leaseUntil: expiresAt(this.lease, now),
          startedAt: now,
        };
        await db.patch(job._id as never, lease as never);
        claimed.push({ ...job, ...(lease as Partial<JobDocument>) });
      }
      return { claimed, nextDue };
    });
  }

  private track(job: JobDocument): void {
    const run = this.run(job)
      .catch((error) =>
        logger.error("scheduler: recording a job's outcome failed", { job: job._id, error: String(error) }),
      )
      .finally(() => {
        this.running.delete(job._id);
        this.wake();
      });
    this.running.set(job._id, run);
  }

  private async run(job: JobDocument): Promise<void> {
    const owned = async (db: DatabaseWriter) => {
      const current = (await db.get(job._id as never)) as JobDocument | null;
      return current?.state === "running" && current.owner === this.id;
    };
    try {
      if (job.kind === "mutation") {
        const outcome = await this.withTimeout(
          this.host.runMutationClaimed(job.name, job.args, async (db) => {
            if (!(await owned(db))) return false;
            await db.patch(
              job._id as never,
              { state: "done", finishedAt: Date.now(), leaseUntil: undefined } as never,
            );
            return true;
          }),
        );
        if (outcome.ran) schedulerMetrics.finished("mutation", "done");
        else logger.info("scheduler: a job claimed here was taken back before it ran", { job: job._id });
      } else {
        await this.withTimeout(this.host.runAction(job.name, job.args));
        await this.finish(job, owned, { state: "done" });
        schedulerMetrics.finished("action", "done");
      }
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
      logger.warn("scheduler: job failed", { job: job._id, function: job.name, error: message });
      schedulerMetrics.finished(job.kind, "failed");
      await this.finish(job, owned, { state: "failed", error: message });
    }
  }

  private finish(
    job: JobDocument,
    owned: (db: DatabaseWriter) => Promise<boolean>,
    outcome: { state: "done" | "failed"; error?: string },
  ): Promise<void> {
    return this.host.write(async (db) => {
      if (await owned(db))
        await db.patch(
          job._id as never,
          { ...outcome, finishedAt: Date.now(), leaseUntil: undefined } as never,
        );
    });
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`The run took longer than ${this.runTimeoutMs} ms`)),
          this.runTimeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** Extends the leases of the jobs running here: a live runner's jobs are never recovered. */
  private async renewLeases(): Promise<void> {
    if (this.running.size === 0) return;
    const ids = [...this.running.keys()];
    const leaseUntil = expiresAt(this.lease, Date.now());
    await this.host
      .write(async (db) => {
        for (const id of ids) {
          const job = (await db.get(id as never)) as JobDocument | null;
          if (job?.state === "running" && job.owner === this.id)
            await db.patch(id as never, { leaseUntil } as never);
        }
      })
      .catch((error) => logger.warn("scheduler: renewing leases failed", { error: String(error) }));
  }

  /** Deletes finished jobs older than the retention, a batch per state and look. */
  private async prune(now: number): Promise<void> {
    const before = now - this.retentionMs;
    for (const state of ["done", "failed", "canceled"]) {
      const any = await this.host.read(
        async (db) => (await finishedJobs(db, state, before).take(1)).length > 0,
      );
      if (!any) continue;
      await this.host.write(async (db) => {
        const old = (await finishedJobs(db, state, before).take(PRUNE_BATCH)) as unknown[];
        for (const doc of old) await db.delete(asJob(doc)._id as never);
      });
    }
  }
}

// The system tables are not in the app's data model: their queries are typed loosely here, once.
const jobs = (db: DatabaseReader, index: string, range: (q: any) => unknown) =>
  db.query(JOBS).withIndex(index as never, range as never);
/** Pending jobs, earliest due first. */
const pendingJobs = (db: DatabaseReader) => jobs(db, "by_state_runAt", (q) => q.eq("state", "pending"));
/** Running jobs whose lease ran out before `now`. */
const expiredJobs = (db: DatabaseReader, now: number) =>
  jobs(db, "by_state_lease", (q) => q.eq("state", "running").lt("leaseUntil", now));
const finishedJobs = (db: DatabaseReader, state: string, before: number) =>
  jobs(db, "by_state_finished", (q) => q.eq("state", state).lt("finishedAt", before));
const cronRow = (db: DatabaseReader, name: string) =>
  db
    .query(CRONS)
    .withIndex("name" as never, ((q: any) => q.eq("name", name)) as never)
    .unique();
