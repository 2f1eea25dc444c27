/**
 * Follows the commit log (`commit-log.ts`; PostgreSQL, or SQLite in cluster mode): delivers every commit of other instances
 * (and of SQL run outside the engine) to the engine's external-commit listeners, in order, exactly
 * once, whichever way it was learnt of — a NOTIFY hint, a background poll, or a request that must
 * not trust a cached identity before this instance has caught up (`sync`).
 *
 * `applied` is the cursor: every commit numbered up to it has been delivered here or is this
 * instance's own (the runtime delivers those itself). Numbers follow commit order, so reading the
 * rows after the cursor in a fresh statement finds everything committed before that statement
 * began; a number missing from the rows was rolled back — unless pruning removed it, in which
 * case this instance fell too far behind and delivers one unknown commit ("re-check everything").
 */
import { logger } from "../../logger.ts";
import { CommitListeners, type ExternalCommitListener } from "./listeners.ts";
import { type FollowerStatements, type LoggedCommit, POSTGRES_FOLLOWER_STATEMENTS } from "./log.ts";

export type { ExternalCommitListener } from "./listeners.ts";

export interface CommitFollowerOptions {
  /** Runs one statement on a pooled connection, outside any transaction. */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Period of the background catch-up, ms: the bound on delay when notifications are lost. */
  pollIntervalMs: number;
  /** Log rows kept when pruning (default 10,000). */
  keep?: number;
  /**
   * Period of pruning, ms (default 30,000); 0: this follower never prunes (SQLite prunes in its
   * committing transactions instead: a pruning transaction of its own would look like an unknown
   * commit to every other process).
   */
  pruneIntervalMs?: number;
  /** The log's statements in the engine's dialect (default PostgreSQL's). */
  statements?: FollowerStatements;
}

/** Rows read per statement while catching up. */
const BATCH = 500;

interface Round {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function round(): Round {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A round nobody awaits (a background poll) must not become an unhandled rejection.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

export class CommitFollower {
  private applied = 0;
  /** Numbers this instance drew for its own commits and not yet passed by the cursor. */
  private readonly own = new Set<number>();
  private readonly listeners = new CommitListeners();
  private started = false;
  private closed = false;
  /** The round waiting to start: its callers arrived after the running round began. */
  private pending?: Round;
  private running = false;
  private lastRoundAt = 0;
  private failing = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly sql: FollowerStatements;
  /** Rebases asked for ({@link rebase}) and done: one is due while `rebases > rebased`. */
  private rebases = 0;
  private rebased = 0;

  constructor(private readonly options: CommitFollowerOptions) {
    this.sql = options.statements ?? POSTGRES_FOLLOWER_STATEMENTS;
  }

  /**
   * Where the cursor is (the newest commit number known to be delivered here); -1 while a
   * {@link rebase} is due, so that no snapshot is trusted without catching up first.
   */
  get position(): number {
    return this.rebases > this.rebased ? -1 : this.applied;
  }

  /**
   * The log may now be another server's (a failover) or a restarted one's: numbers delivered here
   * may be missing from it (committed on the old primary but never replicated, so never
   * acknowledged) or be drawn again for other commits. The next round starts at the head of the
   * log as it is now and delivers one unknown commit ("re-check everything"); until then nothing
   * is trusted ({@link position}).
   */
  rebase(): void {
    this.rebases++;
    void this.sync();
  }

  /** Commits in the log not delivered here yet: the log's head, read now, minus the cursor. */
  async lag(): Promise<number> {
    const [head] = await this.options.query(this.sql.head);
    return Math.max(0, Number(head.seq) - this.applied);
  }

  /** Starts at the head of the log (nothing older matters to a fresh instance) and polls. */
  async start(): Promise<void> {
    if (this.started || this.closed) return;
    const [head] = await this.options.query(this.sql.head);
    this.applied = Math.max(this.applied, Number(head.seq));
    this.started = true;
    const poll = setInterval(() => {
      if (Date.now() - this.lastRoundAt < this.options.pollIntervalMs / 2) return;
      void this.sync();
    }, this.options.pollIntervalMs);
    const timers = [poll];
    const pruneMs = this.options.pruneIntervalMs ?? 30_000;
    if (pruneMs > 0) {
      timers.push(
        setInterval(() => {
          this.options
            .query(this.sql.prune, [this.options.keep ?? 10_000])
            .catch((error) => logger.warn("commit log pruning failed", { error: String(error) }));
        }, pruneMs),
      );
    }
    for (const timer of timers) {
      timer.unref();
      this.timers.push(timer);
    }
  }

  /** Calls `listener` with every commit of another instance; returns the unsubscribe. */
  onCommit(listener: ExternalCommitListener): () => void {
    return this.listeners.add(listener);
  }

  /** This instance drew `seq` for a commit of its own (not yet committed): never deliver it. */
  drew(seq: number): void {
    if (seq <= this.position) return;
    this.own.add(seq);
    this.advance();
  }

  /**
   * The transaction that drew `seqs` failed. Usually it rolled back, but a commit whose answer was
   * lost may have happened: if the cursor already passed one of them, everything is re-checked.
   */
  abandoned(seqs: readonly number[]): void {
    let passed = false;
    for (const seq of seqs) {
      this.own.delete(seq);
      if (seq <= this.applied) passed = true;
    }
    if (passed) this.deliver(undefined);
  }

  /** A notification: commit `seq` with its write set (undefined: read it from the log). */
  hint(seq: number, payload: string | undefined): void {
    if (!this.started || seq <= this.position) return;
    if (seq === this.position + 1 && payload !== undefined) {
      this.applied = seq;
      this.deliver(payload);
      this.advance();
      return;
    }
    void this.sync();
  }

  /**
   * Resolves once every commit made before this call has been delivered. Calls share rounds: one
   * statement serves every caller that arrived before it started (the same tick or while the
   * previous round ran), so the cost per request falls as load rises.
   */
  sync(): Promise<void> {
    if (!this.started || this.closed) return Promise.resolve();
    if (!this.pending) {
      this.pending = round();
      if (!this.running) setImmediate(() => this.runRound());
    }
    return this.pending.promise;
  }

  private async runRound(): Promise<void> {
    const current = this.pending;
    if (!current || this.running) return;
    this.pending = undefined;
    this.running = true;
    this.lastRoundAt = Date.now();
    try {
      await this.catchUp();
      if (this.failing) logger.info("commit log readable again");
      this.failing = false;
      current.resolve();
    } catch (error) {
      if (!this.failing) logger.warn("commit log unreadable", { error: String(error) });
      this.failing = true;
      current.reject(error);
    } finally {
      this.running = false;
      if (this.pending) void this.runRound();
    }
  }

  private async catchUp(): Promise<void> {
    if (this.rebases > this.rebased) {
      const due = this.rebases;
      const [head] = await this.options.query(this.sql.head);
      if (this.closed) return;
      this.applied = Number(head.seq);
      // Numbers drawn on the old server mean nothing here; one of this instance's commits taken
      // for another's costs a needless re-check at most.
      this.own.clear();
      this.rebased = due;
      this.deliver(undefined);
    }
    for (;;) {
      const rows = (await this.options.query(this.sql.readAfter, [this.applied, BATCH])).map(
        (r): LoggedCommit => ({
          seq: Number(r.seq),
          origin: String(r.origin),
          writes: r.writes as string | null,
        }),
      );
      if (this.closed) return;
      const fresh = rows.filter((r) => r.seq > this.applied);
      if (fresh.length && fresh[0].seq > this.applied + 1 && (await this.prunedAfter(this.applied))) {
        // Commits this instance never saw were pruned: their write sets are gone.
        this.applied = Math.max(this.applied, fresh[fresh.length - 1].seq);
        this.deliver(undefined);
      } else {
        for (const row of fresh) {
          if (row.seq <= this.applied) continue;
          this.applied = row.seq;
          if (this.own.delete(row.seq)) continue;
          this.deliver(row.writes ?? undefined);
        }
      }
      this.advance();
      if (rows.length < BATCH) return;
    }
  }

  /** Whether rows numbered after `seq` were pruned (else a missing number was rolled back). */
  private async prunedAfter(seq: number): Promise<boolean> {
    const [oldest] = await this.options.query(this.sql.oldest);
    return oldest.seq === null || Number(oldest.seq) > seq + 1;
  }

  /** Moves the cursor over this instance's own numbers. */
  private advance(): void {
    while (this.own.delete(this.applied + 1)) this.applied++;
    for (const seq of this.own) if (seq <= this.applied) this.own.delete(seq);
  }

  private deliver(payload: string | undefined): void {
    if (!this.closed) this.listeners.emit(payload);
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    this.pending?.resolve();
    this.pending = undefined;
    this.listeners.clear();
  }
}
