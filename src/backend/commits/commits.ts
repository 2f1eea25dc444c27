/**
 * The consistency core: numbers every commit this process learns of, delivers it to the
 * consumers declared in `consumers.ts` (phase `invalidate`, then `notify`), keeps the history that
 * says whether a commit touched something read earlier, and stamps and confirms the freshness of
 * what a request reads.
 *
 * The invariant: a session revoked, a user banned or a signing key rotated is refused on the next
 * request, on every instance. Why it holds:
 * - Every commit runs the `invalidate` phase before the `notify` phase or its writer's caller
 *   hears of it: the identity cache drops what the commit touched; new keys start a new epoch.
 * - HTTP (and server-side calls, actions): the runtime takes a {@link Stamp} when the call
 *   arrives, before its snapshot begins, and hands it to the authenticator with the snapshot. A
 *   cached identity is served only after `confirm(stamp, tx)`: when the snapshot saw a commit of
 *   another instance not delivered here yet, the commits up to it are delivered first (their
 *   `invalidate` phase runs) and the cache is asked again. A result computed at `stamp` is cached
 *   only when `changedSince(stamp, readSet)` is false.
 * - WebSocket: a connection keeps the identity it authenticated, under an identity watch (the
 *   reactor, consumer `live-queries`) over what its step 2 read; a commit touching it starts a
 *   re-check, which ends a revoked identity. Before each request the connection's
 *   `whenCurrent` (sync/connection-identity.ts) confirms a fresh stamp (catching up with the
 *   other instances' commits, which starts that re-check before the catch-up resolves) and waits
 *   for any re-check in flight; so the request runs as an identity no commit before it revoked.
 * - PostgreSQL and SQLite cluster mode: other instances' commits arrive through the shared commit
 *   log (the storage engine's `onExternalCommit`), and `confirm` catches up with it
 *   (`syncExternalCommits`). A read replica's snapshot is first made fresh by WAL position, not by
 *   this stamp: it waits until the replica replayed the primary's WAL insert position read when
 *   the read was asked for (`storage/postgres/read-freshness.ts`), so it holds every commit
 *   acknowledged before; `confirm` then catches up with the commit log rows it sees.
 * - SQLite outside cluster mode (one server process, a CLI run beside it): there is no log, so
 *   `confirm` has nothing to catch up with. Another process's commit is seen by the engine's
 *   `PRAGMA data_version` poll (every 250 ms) and delivered as an unknown commit, which clears the
 *   identity cache and re-checks every live query and identity watch: there a revocation made by
 *   another process is honoured within one poll, not on the next request. A CLI run on a file
 *   that has a commit log (cluster mode) appends to it, so the workers learn its exact writes.
 *
 * A new place that must honour revocation (a new transport, a cache, another read path):
 * 1. Serve its calls through `BackendRuntime.runQuery` / `runMutation` / `runAction` with a
 *    `Caller` carrying the token: they take the stamp before the snapshot and confirm it (neither
 *    takes a stamp from outside). Authenticating on its own, it calls `authenticate(token)` for
 *    each request, or keeps the identity the way a WebSocket connection does (above).
 * 2. A cache of its own gets a consumer line in `consumers.ts`, in the phase its job belongs to
 *    (`invalidate` when requests read what it holds), and stores a result read at `stamp()` only
 *    when `changedSince(stamp, readSet)` is false.
 * 3. Reads from anything but the primary prove their snapshot fresh by the database's own
 *    position first, as read replicas do (`read-freshness.ts`).
 */
import type { Catalog } from "../db/catalog.ts";
import type { Commit, DocumentWrite, ReadSet } from "../db/read-write-sets.ts";
import { decodeWrites, payloadTables } from "../storage/commit-log/payload.ts";
import type { ReadTransaction, StorageEngine } from "../storage/engine.ts";
import { AnnouncedCommit } from "./announced.ts";
import { COMMIT_CONSUMERS, type CommitConsumer } from "./consumers.ts";
import { CommitHistory } from "./history.ts";
import { type AttachedConsumer, Phases } from "./phases.ts";

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
  private readonly consumers = new Phases<typeof COMMIT_CONSUMERS, Commit>(COMMIT_CONSUMERS, {
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

  /**
   * Calls `listener` with every commit, at `consumer`'s place in the declared order
   * (`consumers.ts`); returns the unsubscribe.
   */
  on(consumer: CommitConsumer, listener: CommitListener): () => void {
    return this.consumers.on(consumer, listener);
  }

  /** The consumers in the order each commit reaches them, with their listeners now. */
  attached(): AttachedConsumer[] {
    return this.consumers.attached();
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
      this.consumers.deliver(commit);
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
