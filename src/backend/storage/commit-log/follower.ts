/**
 * Follows the commit log (`commit-log.ts`; PostgreSQL, or SQLite in cluster mode): delivers every commit of other instances
 * (and of SQL run outside the engine) to the engine's external-commit listeners, in order, exactly
 * once, whichever way it was learnt of — a NOTIFY hint, a background poll, or a request that must
 * not trust a cached identity before this instance has caught up (`sync`).
 *
 * `applied` is the cursor: every commit numbered up to it has been delivered here or is this
 * instance's own (the runtime delivers those itself), and no commit numbered up to it can still
 * appear. A number missing from the rows read is one of three things: rolled back (gaps are
 * normal), pruned (this instance fell too far behind: it delivers one unknown commit, "re-check
 * everything"), or — on PostgreSQL, where numbers are drawn without a lock (`commit-log.ts`) —
 * drawn by a transaction that has not committed yet. The cursor never passes such a number: it
 * waits until every transaction that may have drawn it has ended ({@link CommitFollowerOptions.drawers}),
 * then reads again. SQLite draws numbers in commit order (one writer), so there a gap is final.
 */
import { logger } from "../../logger.ts";
import { type Ticking, tick } from "../../ticker.ts";
import { databaseUnavailable } from "../db-errors.ts";
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
  /**
   * This instance's origin in the log: its rows are never delivered here, also when the follower
   * reads one before the committing code heard its number ({@link CommitFollower.drew}); a commit
   * whose outcome was lost is handled by {@link CommitFollower.abandoned}.
   */
  origin?: string;
  /**
   * PostgreSQL: who may still commit a number. `drawn` is the newest number drawn so far (read
   * first), `drawers` the transactions able to draw or hold one (read after): every number up to
   * `drawn` belongs to one of them or to a transaction that has ended. Without it (SQLite) a
   * missing number is final.
   */
  drawers?(): Promise<Drawers>;
  /**
   * A round that has waited this long for the drawers of a missing number (a transaction whose
   * COMMIT never arrived holds its lock until the server drops it) fails with
   * `DATABASE_UNAVAILABLE` for its callers instead of holding them; the next round asks again.
   * Default 10,000 ms (the default statement timeout).
   */
  maxSettleMs?: number;
}

/** An answer of {@link CommitFollowerOptions.drawers}. */
export interface Drawers {
  drawn: number;
  /** Transaction identities, compared between answers. */
  drawers: string[];
}

/** How long a round waits before asking again whether the drawers of a missing number ended, ms. */
const SETTLE_DELAYS_MS = [1, 2, 4, 8, 16, 25];
/**
 * A number missing before hints already heard waits this long for its own hint before a round
 * reads the log, ms (at most twice this, see {@link CommitFollower.armEarlyTimer}). Longer than
 * the pause between an instance's NOTIFY statements under load (20 ms, `postgres/notify.ts`): the
 * missing number is usually another instance's commit in its next statement, or one still
 * committing. With 10 ms, and a read whenever the timer found any hint waiting, a follower of a
 * loaded instance read back from the log 0.44 of the commits its hints had carried (0.04–0.06 now
 * at 3,400 commits/s; 0.45–1.0 while the 20 ms pause also followed full NOTIFY statements, which
 * capped an instance's notifications below that rate; issue 48, docs/scale-out.md). A freshness
 * check never waits for this: it reads the log itself (`sync`).
 */
const EARLY_HINT_WAIT_MS = 30;
/** Out-of-order hints kept at most (beyond this a round reads the log instead). */
const MAX_EARLY_HINTS = 10_000;

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
  private readonly timers: Ticking[] = [];
  private readonly sql: FollowerStatements;
  /**
   * Every number up to this one was drawn by a transaction that has ended (PostgreSQL), so a read
   * started afterwards sees each of them that committed. Unbounded where numbers follow commit order.
   */
  private settledUpTo: number;
  /** Numbers of this instance's commits whose outcome was lost, not read yet (see `abandoned`). */
  private readonly orphans = new Set<number>();
  /** Hints of commits numbered past a missing one, with their write sets, until it arrives. */
  private readonly early = new Map<number, string>();
  private earlyTimer?: NodeJS.Timeout;
  /** Rebases asked for ({@link rebase}) and done: one is due while `rebases > rebased`. */
  private rebases = 0;
  private rebased = 0;

  constructor(private readonly options: CommitFollowerOptions) {
    this.sql = options.statements ?? POSTGRES_FOLLOWER_STATEMENTS;
    this.settledUpTo = options.drawers ? 0 : Number.POSITIVE_INFINITY;
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
    // Nothing committed before the start matters to a fresh instance, but a number drawn before it
    // may commit after it: start past the numbers whose drawers have all ended, not at the head.
    const drawers = await this.options.drawers?.();
    if (drawers) {
      await this.waitForDrawers(drawers, this.options.maxSettleMs ?? 10_000);
      this.applied = Math.max(this.applied, drawers.drawn);
      this.settledUpTo = Math.max(this.settledUpTo, drawers.drawn);
    } else {
      const [head] = await this.options.query(this.sql.head);
      this.applied = Math.max(this.applied, Number(head.seq));
    }
    this.started = true;
    this.timers.push(
      tick("commit_log_poll", this.options.pollIntervalMs, () => {
        if (Date.now() - this.lastRoundAt < this.options.pollIntervalMs / 2) return;
        return this.sync();
      }),
    );
    const pruneMs = this.options.pruneIntervalMs ?? 30_000;
    if (pruneMs > 0) {
      this.timers.push(
        tick("commit_log_prune", pruneMs, () =>
          this.options
            .query(this.sql.prune, [this.options.keep ?? 10_000])
            .catch((error) => logger.warn("commit log pruning failed", { error: String(error) })),
        ),
      );
    }
  }

  /** Calls `listener` with every commit of another instance; returns the unsubscribe. */
  onExternalCommit(listener: ExternalCommitListener): () => void {
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
      // Not read yet: if it did commit, its row is delivered like another instance's.
      else if (this.options.origin !== undefined) this.orphans.add(seq);
    }
    if (passed) this.deliver(undefined);
  }

  /** A notification: commit `seq` with its write set (undefined: read it from the log). */
  hint(seq: number, payload: string | undefined): void {
    if (!this.started || seq <= this.position) return;
    if (payload === undefined) {
      void this.sync();
      return;
    }
    if (seq === this.position + 1) {
      this.applied = seq;
      this.deliver(payload);
      this.advance();
      return;
    }
    // Numbers are drawn before commit, so hints arrive out of order: the missing ones are usually
    // on their way. A round reads the log if they are not here soon (rolled back, or not announced).
    if (this.early.size >= MAX_EARLY_HINTS) {
      this.early.clear();
      void this.sync();
      return;
    }
    this.early.set(seq, payload);
    this.armEarlyTimer();
  }

  /**
   * Reads the log once the number missing now has waited {@link EARLY_HINT_WAIT_MS}. When its hint
   * came meanwhile but hints past another missing number wait, that number gets its own wait: under
   * a steady stream of hints out of order some always wait, and reading the log whenever the
   * timer found any would read every commit back that the hints had carried.
   */
  private armEarlyTimer(): void {
    if (this.earlyTimer || !this.early.size) return;
    const missing = this.applied + 1;
    this.earlyTimer = setTimeout(() => {
      this.earlyTimer = undefined;
      if (!this.early.size) return;
      if (this.applied >= missing) this.armEarlyTimer();
      else void this.sync();
    }, EARLY_HINT_WAIT_MS);
    this.earlyTimer.unref();
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
      // Hints past a number the round did not find yet wait for it again.
      else if (!this.closed) this.armEarlyTimer();
    }
  }

  private async catchUp(): Promise<void> {
    if (this.rebases > this.rebased) {
      const due = this.rebases;
      // As at the start: past the numbers whose drawers have all ended on this server, not its head
      // (a number drawn there before may still commit).
      const drawers = await this.options.drawers?.();
      if (drawers) await this.waitForDrawers(drawers, this.options.maxSettleMs ?? 10_000);
      const head = drawers ? drawers.drawn : Number((await this.options.query(this.sql.head))[0].seq);
      if (this.closed) return;
      this.applied = head;
      if (drawers) this.settledUpTo = head;
      // Numbers drawn on the old server mean nothing here; one of this instance's commits taken
      // for another's costs a needless re-check at most.
      this.own.clear();
      this.orphans.clear();
      this.early.clear();
      this.rebased = due;
      this.deliver(undefined);
    }
    for (;;) {
      // Read before the rows: a number settled by then that the rows lack was rolled back.
      const settled = this.settledUpTo;
      const rows = (await this.options.query(this.sql.readAfter, [this.applied, BATCH])).map(
        (r): LoggedCommit => ({
          seq: Number(r.seq),
          origin: String(r.origin),
          writes: r.writes as string | null,
        }),
      );
      if (this.closed) return;
      this.advance();
      const fresh = rows.filter((r) => r.seq > this.applied);
      let missing: number | undefined;
      if (fresh.length && fresh[0].seq > this.applied + 1 && fresh[0].seq - 1 > settled) {
        // The next number may belong to a transaction still committing (not pruned, not rolled back).
        missing = this.applied + 1;
      } else if (fresh.length && fresh[0].seq > this.applied + 1 && (await this.prunedAfter(this.applied))) {
        // Commits this instance never saw were pruned: their write sets are gone.
        this.applied = Math.max(this.applied, fresh[fresh.length - 1].seq);
        this.deliver(undefined);
      } else {
        for (const row of fresh) {
          this.advance();
          if (row.seq <= this.applied) continue;
          if (row.seq > this.applied + 1 && row.seq - 1 > settled) {
            // A number before this row may belong to a transaction still committing.
            missing = row.seq - 1;
            break;
          }
          this.applied = row.seq;
          if (this.own.delete(row.seq)) continue;
          if (row.origin === this.options.origin && !this.orphans.delete(row.seq)) continue;
          this.deliver(row.writes ?? undefined);
        }
      }
      this.advance();
      if (missing !== undefined) {
        await this.settle();
        continue;
      }
      if (rows.length < BATCH) return;
    }
  }

  /** Waits until every transaction that may hold a number drawn so far has ended. */
  private async settle(): Promise<void> {
    const drawers = this.options.drawers;
    if (!drawers) return;
    const now = await drawers();
    await this.waitForDrawers(now, this.options.maxSettleMs ?? 10_000);
    this.settledUpTo = Math.max(this.settledUpTo, now.drawn);
  }

  private async waitForDrawers({ drawers }: Drawers, maxMs = Number.POSITIVE_INFINITY): Promise<void> {
    const since = Date.now();
    let waiting = new Set(drawers);
    for (let i = 0; waiting.size && !this.closed; i++) {
      if (Date.now() - since > maxMs) {
        logger.warn("commit log: a transaction holding a commit number has not ended", {
          waitedMs: Date.now() - since,
        });
        throw databaseUnavailable();
      }
      const ms = SETTLE_DELAYS_MS[Math.min(i, SETTLE_DELAYS_MS.length - 1)];
      await new Promise((r) => setTimeout(r, ms));
      const still = new Set((await this.options.drawers!()).drawers);
      waiting = new Set([...waiting].filter((d) => still.has(d)));
    }
  }

  /** Whether rows numbered after `seq` were pruned (else a missing number was rolled back). */
  private async prunedAfter(seq: number): Promise<boolean> {
    const [oldest] = await this.options.query(this.sql.oldest);
    return oldest.seq === null || Number(oldest.seq) > seq + 1;
  }

  /** Moves the cursor over this instance's own numbers and over hints that arrived early. */
  private advance(): void {
    for (;;) {
      const next = this.applied + 1;
      if (this.own.delete(next)) {
        this.applied = next;
        continue;
      }
      const payload = this.early.get(next);
      if (payload === undefined) break;
      this.early.delete(next);
      this.applied = next;
      this.deliver(payload);
    }
    for (const seq of this.own) if (seq <= this.applied) this.own.delete(seq);
    for (const seq of this.early.keys()) if (seq <= this.applied) this.early.delete(seq);
    for (const seq of this.orphans) if (seq <= this.applied) this.orphans.delete(seq);
  }

  private deliver(payload: string | undefined): void {
    if (!this.closed) this.listeners.emit(payload);
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.splice(0)) timer.stop();
    if (this.earlyTimer) clearTimeout(this.earlyTimer);
    this.early.clear();
    this.pending?.resolve();
    this.pending = undefined;
    this.listeners.clear();
  }
}
