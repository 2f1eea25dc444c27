/**
 * The reactive engine: keeps "watches" (a shared query execution, or a connection's identity)
 * current with the database. A watch is re-run when a commit's write set touches its read set.
 *
 * No update is ever missed: a run records the last published sequence before it starts and
 * retains the commits history from there; when it ends, the history says whether a commit made
 * meanwhile touched the run's new read set (`touchedSince`), and a touched watch runs again. Re-runs go through a bounded queue (identity re-checks first),
 * so a burst of commits never opens more read transactions than `concurrency`.
 */
import { CommitMatcher } from "../commits/history.ts";
import type { Catalog } from "../db/catalog.ts";
import type { Commit, ReadSet } from "../db/read-write-sets.ts";
import { commitTables, tablesOf } from "../db/read-write-sets.ts";
import { logger } from "../logger.ts";
import { observeReruns } from "../metrics/metrics.ts";

/** Something kept current by the reactor. `execute` must not throw; it returns what it read. */
export abstract class Watch {
  /** What the last run read; null before the first run. */
  readSet: ReadSet | null = null;
  /** Tables this watch is bucketed under. */
  tables: string[] = [];
  dirty = false;
  running = false;
  removed = false;
  /** Last published sequence when the current/last run started. */
  startSeq = 0;
  /** Identity re-checks jump the queue so revocation is not delayed behind query re-runs. */
  abstract readonly priority: boolean;
  waiters: { seq: number; resolve: () => void }[] | null = null;
  abstract execute(): Promise<ReadSet>;
  /** Called when the watch becomes stale (queued for a run). */
  onInvalidated?(): void;
  /** Called after a run when no newer commit touched the watch: its result is current. */
  onSettled?(): void;
}

/** What the reactor needs of the commits core (commits/commits.ts). */
export interface ReactorCommits {
  readonly lastSequence: number;
  readonly history: {
    /** The matcher of the commit just published, when it is the one being delivered. */
    latest(): CommitMatcher | undefined;
    touchedSince(sequence: number, readSet: ReadSet): boolean;
    retain(sequence: number): void;
    release(sequence: number): void;
  };
}

export interface ReactorOptions {
  /** Largest number of watches running at once (default 8). */
  concurrency?: number;
}

export class Reactor {
  private readonly byTable = new Map<string, Set<Watch>>();
  private readonly all = new Set<Watch>();
  private readonly urgent: Watch[] = [];
  private readonly queue: Watch[] = [];
  private readonly running = new Set<Watch>();
  private readonly concurrency: number;
  /** Executions started, for tests and benchmarks (precision: no re-run for unrelated writes). */
  executions = 0;
  /** Watches marked for a run, counted for the re-runs-per-commit metric. */
  private invalidations = 0;

  constructor(
    private readonly catalog: Catalog,
    private readonly commits: ReactorCommits,
    options: ReactorOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 8;
  }

  get size(): number {
    return this.all.size;
  }

  /** Registers a watch and schedules its first run. */
  add(watch: Watch): void {
    this.all.add(watch);
    this.invalidate(watch);
  }

  /** Forgets a watch; a run in progress finishes but its result is dropped by the owner. */
  remove(watch: Watch): void {
    if (watch.removed) return;
    watch.removed = true;
    this.all.delete(watch);
    this.unbucket(watch);
    this.resolveWaiters(watch, Number.POSITIVE_INFINITY);
  }

  /** Marks a watch as needing a run (e.g. its identity changed); no-op while already queued. */
  invalidate(watch: Watch): void {
    if (watch.removed || watch.dirty) return;
    watch.dirty = true;
    this.invalidations++;
    watch.onInvalidated?.();
    if (!watch.running) this.enqueue(watch);
  }

  /** Resolves once `watch` reflects every commit up to `seq` (or is removed). */
  whenFresh(watch: Watch, seq: number): Promise<void> {
    if (watch.removed || (!watch.dirty && !watch.running)) return Promise.resolve();
    return new Promise((resolve) => {
      (watch.waiters ??= []).push({ seq, resolve });
    });
  }

  /** Handles a commit: call for every published commit, synchronously (consumer `live-queries`, `notify` phase). */
  handleCommit(commit: Commit): void {
    const before = this.invalidations;
    if (commit.unknown) {
      for (const w of this.all) if (!w.running) this.invalidate(w);
      observeReruns(this.invalidations - before);
      return;
    }
    const latest = this.commits.history.latest();
    const matcher = latest?.commit === commit ? latest : new CommitMatcher(this.catalog, commit);
    // From an announced commit's header: its writes are parsed only if a watch of its tables exists.
    for (const table of commitTables(commit)) {
      const bucket = this.byTable.get(table);
      if (!bucket) continue;
      for (const w of bucket) {
        // Running watches are checked against the history when they finish (their read set is changing).
        // An identity check in flight must still hold its connection's updates at once, though:
        // a revocation committed now must not let other updates through until the check re-runs.
        if (w.running && w.priority && w.readSet && matcher.touches(w.readSet)) w.onInvalidated?.();
        if (w.dirty || w.running || !w.readSet) continue;
        if (matcher.touches(w.readSet)) this.invalidate(w);
      }
    }
    observeReruns(this.invalidations - before);
  }

  private enqueue(watch: Watch): void {
    (watch.priority ? this.urgent : this.queue).push(watch);
    this.pump();
  }

  private pump(): void {
    while (this.running.size < this.concurrency) {
      const next = this.urgent.shift() ?? this.queue.shift();
      if (!next) return;
      if (next.removed || !next.dirty || next.running) continue;
      void this.run(next);
    }
  }

  private async run(watch: Watch): Promise<void> {
    watch.dirty = false;
    watch.running = true;
    const startSeq = this.commits.lastSequence;
    watch.startSeq = startSeq;
    this.commits.history.retain(startSeq);
    this.running.add(watch);
    this.executions++;
    let readSet: ReadSet | null = null;
    try {
      readSet = await watch.execute();
    } catch (e) {
      logger.error("reactive execution failed", { error: String(e) });
    }
    watch.running = false;
    this.running.delete(watch);
    if (!watch.removed) {
      // A failed execution (a bug: execute must not throw) keeps its old read set rather than
      // re-running in a hot loop.
      if (readSet) this.rebucket(watch, readSet);
      if (!watch.dirty && readSet && this.commits.history.touchedSince(startSeq, readSet)) watch.dirty = true;
      if (watch.dirty) {
        watch.onInvalidated?.();
        (watch.priority ? this.urgent : this.queue).push(watch);
      } else {
        watch.onSettled?.();
      }
      this.resolveWaiters(watch, watch.dirty ? watch.startSeq : Number.POSITIVE_INFINITY);
    }
    this.commits.history.release(startSeq);
    this.pump();
  }

  private resolveWaiters(watch: Watch, upTo: number): void {
    const waiters = watch.waiters;
    if (!waiters) return;
    const keep = waiters.filter((w) => w.seq > upTo);
    for (const w of waiters) if (w.seq <= upTo) w.resolve();
    watch.waiters = keep.length ? keep : null;
  }

  private rebucket(watch: Watch, readSet: ReadSet): void {
    watch.readSet = readSet;
    const tables = [...tablesOf(readSet)];
    if (tables.length === watch.tables.length && tables.every((t, i) => t === watch.tables[i])) return;
    this.unbucket(watch);
    watch.tables = tables;
    for (const t of tables) {
      let bucket = this.byTable.get(t);
      if (!bucket) this.byTable.set(t, (bucket = new Set()));
      bucket.add(watch);
    }
  }

  private unbucket(watch: Watch): void {
    for (const t of watch.tables) {
      const bucket = this.byTable.get(t);
      bucket?.delete(watch);
      if (bucket?.size === 0) this.byTable.delete(t);
    }
    watch.tables = [];
  }
}
