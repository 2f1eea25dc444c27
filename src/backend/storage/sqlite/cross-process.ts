/**
 * How one SQLite engine keeps in step with the other processes on its file. Alone (one server
 * process, perhaps a CLI run beside it), it watches `PRAGMA data_version`, which changes only when
 * another connection commits, and tells its listeners of an unknown commit ("re-check
 * everything"). In cluster mode (`SqliteOptions.commitLog`), every commit is logged in the
 * committing transaction (sqlite/commit-log.ts), a follower (commit-log/follower.ts) on a connection
 * of its own delivers the other workers' write sets, and wake-ups through the cluster's primary
 * make it read the log sooner; a `data_version` change that brought no logged commit came from
 * outside the cluster. A process outside the cluster (the CLI) on a file that has a log appends
 * to it too, so the workers learn its exact write sets.
 */
import { randomUUID } from "node:crypto";
import { logger } from "../../logger.ts";
import { type Ticking, tick } from "../../ticker.ts";
import { CommitFollower } from "../commit-log/follower.ts";
import { CommitListeners, type ExternalCommitListener } from "../commit-log/listeners.ts";
import { COMMIT_LOG_TABLE, MAX_LOGGED_BYTES } from "../commit-log/log.ts";
import type { ReadTransaction } from "../engine.ts";
import {
  DEFAULT_LOG_KEEP,
  PRUNE_EVERY,
  SQLITE_APPEND_SQL,
  SQLITE_FOLLOWER_STATEMENTS,
  SQLITE_LOG_SCHEMA,
  SQLITE_PRUNE_UPTO_SQL,
  SQLITE_SNAPSHOT_HEAD_SQL,
  type SqliteCommitLogOptions,
} from "./commit-log.ts";
import { SqliteConnection } from "./connection.ts";
import type { SqliteOptions } from "./options.ts";
import { SqliteReader } from "./transaction.ts";
import type { SqliteWriteLock } from "./write-lock.ts";

/** What appending to the log needs. */
interface LogWriter {
  /** This process's origin in the log. */
  instanceId: string;
  /** Commits this process logged, counting towards the next pruning. */
  commits: number;
  /** Rows kept when pruning. */
  keep: number;
  /** Cluster mode: the number drawn is this process's own (never delivered back to it). */
  follower?: CommitFollower;
}

/** Cluster mode's state (see {@link SqliteOptions.commitLog}). */
interface ClusterLog extends LogWriter {
  settings: SqliteCommitLogOptions;
  /** The follower's connection. */
  conn: SqliteConnection;
  follower: CommitFollower;
  /** A logged commit of another process was delivered since the `data_version` poll last looked. */
  heard: boolean;
  unsubscribe?: () => void;
}

export class SqliteCrossProcess {
  private readonly listeners = new CommitListeners();
  private pollTimer?: Ticking;
  private lastDataVersion = 0;
  private closed = false;
  /** Cluster mode's commit log; undefined for a single server process. */
  private readonly log?: ClusterLog;
  /**
   * Where this process appends its commits: cluster mode's log, or — in a process outside the
   * cluster (the CLI) on a database that has a log — the same log without following it, so the
   * workers learn its exact write sets instead of re-checking everything.
   */
  private logWriter?: LogWriter;

  constructor(
    private readonly options: SqliteOptions,
    private readonly writer: SqliteConnection,
    private readonly writeLock: SqliteWriteLock,
  ) {
    if (options.commitLog) this.log = this.clusterLog(options.commitLog);
  }

  private clusterLog(settings: SqliteCommitLogOptions): ClusterLog {
    if (this.options.filename === ":memory:")
      throw new Error("cluster mode needs a database file, not :memory:");
    // Its own connection, reading outside any transaction: it sees every commit made before it reads.
    const conn = new SqliteConnection(this.options.filename, this.options.synchronous ?? "NORMAL", true);
    const follower = new CommitFollower({
      query: async (sql, params) => conn.stmts.get(sql).all(params ?? []) as Record<string, unknown>[],
      pollIntervalMs: settings.pollIntervalMs ?? 500,
      keep: settings.keep,
      pruneIntervalMs: 0,
      statements: SQLITE_FOLLOWER_STATEMENTS,
    });
    const log: ClusterLog = {
      settings,
      conn,
      follower,
      instanceId: randomUUID(),
      commits: 0,
      keep: settings.keep ?? DEFAULT_LOG_KEEP,
      heard: false,
    };
    follower.onExternalCommit((payload) => {
      log.heard = true;
      this.listeners.emit(payload);
    });
    return log;
  }

  /** Once the layout is migrated: joins (or, outside the cluster, writes to) the log, and starts watching. */
  async start(): Promise<void> {
    if (this.log) await this.startLog(this.log);
    else if (this.hasLogTable()) {
      this.logWriter = { instanceId: randomUUID(), commits: 0, keep: DEFAULT_LOG_KEEP };
    }
    this.lastDataVersion = this.dataVersion();
    this.startPolling();
  }

  private hasLogTable(): boolean {
    return (
      this.writer.db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(COMMIT_LOG_TABLE) !== undefined
    );
  }

  /** Creates the log table when missing (a write only then: it would wake every other process). */
  private async startLog(log: ClusterLog): Promise<void> {
    if (!this.hasLogTable()) {
      const release = await this.writeLock.turn();
      try {
        await this.writeLock.begin(Number.POSITIVE_INFINITY);
        this.writer.db.prepare(SQLITE_LOG_SCHEMA).run();
        this.writer.commit.run();
      } finally {
        release();
      }
    }
    this.logWriter = log;
    await log.follower.start();
    log.unsubscribe = log.settings.wakeups.subscribe((seq) => log.follower.hint(seq, undefined));
  }

  private dataVersion(): number {
    return this.writer.db.pragma("data_version", { simple: true }) as number;
  }

  /** `PRAGMA data_version` changes only when another connection (another process) commits. */
  private startPolling(): void {
    if (this.pollTimer || this.options.filename === ":memory:") return;
    this.pollTimer = tick("sqlite_external_commits", this.options.pollIntervalMs ?? 250, () => {
      if (this.closed || this.listeners.size === 0) return;
      const version = this.dataVersion();
      if (version === this.lastDataVersion) return;
      this.lastDataVersion = version;
      const log = this.log;
      if (!log) {
        this.listeners.emit(undefined);
        return;
      }
      // Cluster mode: the other workers' commits are in the log. A change that brought no logged
      // commit since the last look came from outside the cluster (the CLI): re-check everything.
      log.follower.sync().then(
        () => {
          if (!log.heard) this.listeners.emit(undefined);
          log.heard = false;
        },
        (error) => logger.warn("commit log unreadable", { error: String(error) }),
      );
    });
  }

  /**
   * Inside the write transaction, just before COMMIT: logs its write set (see {@link logWriter};
   * `writeSet` is only called when there is a log), now and then deleting the rows beyond `keep`
   * in the same transaction. Returns the number drawn, or undefined when nothing was written.
   */
  append(writeSet: (() => string | undefined) | undefined): number | undefined {
    const log = this.logWriter;
    if (!log) return undefined;
    const payload = writeSet?.();
    if (payload === undefined) return undefined;
    const writes = Buffer.byteLength(payload) > MAX_LOGGED_BYTES ? null : payload;
    const { stmts } = this.writer;
    const seq = Number(stmts.get(SQLITE_APPEND_SQL).run(log.instanceId, writes).lastInsertRowid);
    log.follower?.drew(seq);
    if (++log.commits % PRUNE_EVERY === 0) stmts.get(SQLITE_PRUNE_UPTO_SQL).run(seq - log.keep);
    return seq;
  }

  /** The transaction that drew `seq` did not commit. */
  abandoned(seq: number): void {
    this.log?.follower.abandoned([seq]);
  }

  /** Commit `seq` is in the log: wakes the other workers. */
  published(seq: number): void {
    this.log?.settings.wakeups.publish(seq);
  }

  onExternalCommit(listener: ExternalCommitListener): () => void {
    return this.listeners.add(listener);
  }

  /**
   * Cluster mode: nothing to wait for when this process has applied the newest commit `snapshot`
   * sees (the log's head, read in the snapshot: one indexed read), else one catch-up from the log.
   * Without a snapshot (mutations, socket connects) the head is read outside any transaction,
   * which sees every commit made before the call. A single process has nobody to wait for.
   */
  syncExternalCommits(snapshot?: ReadTransaction): Promise<void> | undefined {
    const log = this.log;
    if (!log) return undefined;
    const conn = snapshot instanceof SqliteReader ? snapshot.connection : log.conn;
    const head = conn.stmts.get(SQLITE_SNAPSHOT_HEAD_SQL).pluck().get() as number | undefined;
    if (head === undefined || head <= log.follower.position) return undefined;
    return log.follower.sync();
  }

  /** Cluster mode: commits in the log this process has not applied yet (undefined without a log). */
  commitLag(): Promise<number> | undefined {
    return this.log?.follower.lag();
  }

  close(): void {
    this.closed = true;
    this.pollTimer?.stop();
    if (this.log) {
      this.log.unsubscribe?.();
      this.log.follower.close();
      this.log.conn.db.close();
    }
  }
}
