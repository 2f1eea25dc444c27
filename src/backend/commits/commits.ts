/**
 * The consistency core: numbers every commit this process learns of, delivers it in named phases,
 * keeps the history that says whether a commit touched something read earlier, and stamps and
 * confirms the freshness of what a request reads.
 *
 * The invariant: a session revoked, a user banned or a signing key rotated is refused on the next
 * request, on every instance. It holds because every commit runs the `invalidate` phase (the
 * identity cache drops what the commit touched; new keys start a new epoch) before the `notify`
 * phase or its writer's caller hears of it, another instance's commit runs it before a cached
 * identity is served (`confirm`), and a result read at a `stamp` is cached only when
 * `changedSince(stamp, readSet)` is false.
 *
 * A new place that must honour revocation (a read replica, a new transport) takes a `stamp()` when
 * its request arrives, passes it to `confirm` (or to `runQuery` / `authenticate`, which do) and
 * listens in the phase its job belongs to; nothing depends on the order listeners registered in.
 */
import type { Catalog } from "../db/catalog.ts";
import type { Commit, DocumentWrite, ReadSet } from "../db/read-write-sets.ts";
import { decodeWrites, payloadTables } from "../storage/commit-log/payload.ts";
import type { ReadTransaction, StorageEngine } from "../storage/engine.ts";
import { AnnouncedCommit } from "./announced.ts";
import { CommitHistory } from "./history.ts";
import { Phases } from "./phases.ts";

/**
 * The phases of a commit's delivery, in order. `invalidate`: drop whatever the commit made stale
 * (the identity cache, the env store); a listener that throws is not contained, as skipping an
 * invalidation would be unsafe. `notify`: act on the commit (live subscriptions, presence, the
 * scheduler, tests); a failing listener is logged and the others still hear it.
 */
export const COMMIT_PHASES = ["invalidate", "notify"] as const;
export type CommitPhase = (typeof COMMIT_PHASES)[number];

export type CommitListener = (commit: Commit) => void;

/**
 * What this process knew when a request began: the last commit delivered here and the epoch
 * (bumped when everything read before became stale for a reason no write set shows, e.g. new
 * signing keys). Immutable: taking one allocates nothing until the next commit.
 */
export interface Stamp {
  readonly sequence: number;
  readonly epoch: number;
}

/** The part of a storage engine the core needs: other instances' commits and the catch-up. */
export type CommitSource = Pick<StorageEngine, "onExternalCommit" | "syncExternalCommits">;

export class Commits {
  private current: Stamp = { sequence: 0, epoch: 0 };
  private readonly phases = new Phases<CommitPhase, Commit>(COMMIT_PHASES, {
    contained: ["notify"],
    failureMessage: "commit listener failed",
  });
  /** The recent commits: `touchedSince(sequence, readSet)`. */
  readonly history: CommitHistory;

  constructor(
    catalog: Catalog,
    private readonly source: CommitSource,
  ) {
    this.history = new CommitHistory(catalog);
  }

  /** The sequence number of the last commit delivered. */
  get lastSequence(): number {
    return this.current.sequence;
  }

  /** Calls `listener` with every commit, in `phase`; returns the unsubscribe. */
  on(phase: CommitPhase, listener: CommitListener): () => void {
    return this.phases.on(phase, listener);
  }

  /**
   * Delivers a commit: one of this process, after it committed (other instances learn of it from
   * the storage engine, which records it in the commit's own transaction), or another instance's.
   * `unknown`: its write set is not known, so everyone must assume anything changed.
   */
  publish(writes: DocumentWrite[], unknown = false): void {
    const sequence = this.current.sequence + 1;
    this.deliver({ sequence, writes, unknown });
  }

  private deliver(commit: Commit): void {
    this.current = { sequence: commit.sequence, epoch: this.current.epoch };
    this.history.record(commit);
    try {
      this.phases.deliver(commit);
    } finally {
      // What the listeners parsed of an announced commit, the history keeps exactly; the rest by table.
      this.history.settle(commit);
    }
  }

  /** Set while an announced commit is delivered (its malformed JSON is answered after the delivery). */
  private delivering?: Commit;

  /**
   * Delivers the commits of other instances as the engine reports them; returns the unsubscribe.
   * A payload with a header (`commit-log/payload.ts`) becomes an {@link AnnouncedCommit}: its
   * documents are parsed only if a listener or the history asks for them.
   */
  followOtherInstances(): () => void {
    return this.source.onExternalCommit((payload) => {
      const tables = payloadTables(payload);
      if (tables && payload) {
        const commit = new AnnouncedCommit(this.current.sequence + 1, tables, payload, (c) =>
          this.malformed(c),
        );
        this.delivering = commit;
        try {
          this.deliver(commit);
        } finally {
          this.delivering = undefined;
        }
        if (commit.unknown) this.publish([], true);
        return;
      }
      const writes = decodeWrites(payload);
      if (writes) this.publish(writes);
      else this.publish([], true);
    });
  }

  /**
   * An announced commit's JSON did not parse after some listeners had skipped it: everything is
   * re-checked, at the end of its delivery or, when it was parsed later (the history, a reactor
   * run), before anything else runs.
   */
  private malformed(commit: AnnouncedCommit): void {
    if (this.delivering === commit) return;
    queueMicrotask(() => this.publish([], true));
  }

  /** What this process knows now; take it when a request arrives, before its snapshot begins. */
  stamp(): Stamp {
    return this.current;
  }

  /** Everything read before now is stale for a reason no write set shows (e.g. new signing keys). */
  newEpoch(): void {
    this.current = { sequence: this.current.sequence, epoch: this.current.epoch + 1 };
  }

  /** True when what was read into `readSet` at `stamp` may be stale now. */
  changedSince(stamp: Stamp, readSet: ReadSet): boolean {
    if (stamp.epoch !== this.current.epoch) return true;
    return stamp.sequence !== this.current.sequence && this.history.touchedSince(stamp.sequence, readSet);
  }

  /**
   * Confirms a request's `stamp` against every instance sharing the database: catches up with the
   * commits made anywhere before now (each runs the phases here, so what it revoked is dropped)
   * and resolves to whether anything arrived since `stamp` (true: look again). Undefined, at once,
   * when there is nothing to catch up with: one process, or `tx` (the request's snapshot) saw no
   * commit this instance has not heard of.
   */
  confirm(stamp: Stamp, tx?: ReadTransaction): Promise<boolean> | undefined {
    const catchingUp = this.source.syncExternalCommits?.(tx);
    if (!catchingUp) return undefined;
    return catchingUp.then(
      () => this.current.sequence !== stamp.sequence || this.current.epoch !== stamp.epoch,
    );
  }
}
