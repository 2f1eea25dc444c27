/**
 * The SQLite engine's reader connections: each read runs in a snapshot (`BEGIN` … `COMMIT`) on a
 * connection nobody else is using, so a query never sees a half-applied mutation and never blocks
 * the writer (WAL). Connections are opened on demand and kept for the next read; the pool grows to
 * the largest number of reads ever open at once. `:memory:` has no second connection: reads run on
 * the writer there.
 *
 * Invariant: a read sees every commit that finished before it began. A reader may keep its
 * snapshot open after a read and serve the next read from it only while no connection of any
 * process has committed since that snapshot began (`commit-probe.ts`, asked at every read);
 * otherwise it ends the snapshot and begins a new one. This takes about a tenth off the server CPU
 * of an HTTP point read (decisions 40 and 42). Kept snapshots end before this process writes and
 * after `IDLE_MS` without reads, so they neither stop SQLite from restarting the log (it restarts
 * only when no reader uses it) nor hold the file's read lock while the server is idle. Cluster
 * mode does not keep snapshots: other workers write without this process knowing when.
 */
import { type Ticking, tick } from "../../ticker.ts";
import type { ReadTransaction } from "../engine.ts";
import { CommitProbe } from "./commit-probe.ts";
import { SqliteConnection } from "./connection.ts";
import { SqliteReader } from "./transaction.ts";

/** A kept snapshot that no read used for this long is ended, in ms. */
export const IDLE_MS = 50;

/** A reader connection and the snapshot it may keep between reads. */
class PooledReader {
  /** A reader holds no state of its own, so each connection keeps one for all its reads. */
  readonly reader: SqliteReader;
  /** BEGIN ran and COMMIT has not; between reads, the snapshot is kept (valid while `mark` is). */
  open = false;
  /** The probe's mark taken before the snapshot began. */
  mark = 0;

  constructor(readonly conn: SqliteConnection) {
    this.reader = new SqliteReader(conn);
  }

  end(): void {
    this.open = false;
    this.conn.commit.run();
  }
}

export class SqliteReadPool {
  private readonly idle: PooledReader[] = [];
  private readonly all: SqliteConnection[] = [];
  /** `:memory:`'s reader, on the writer's connection; otherwise undefined. */
  private readonly onWriter: SqliteReader | undefined;
  /** Opened at the first read; null when snapshots are not kept (see the header) or no probe opens. */
  private changes: CommitProbe | null | undefined;
  private idleTimer: Ticking | undefined;
  /** A read kept its snapshot since the idle timer last ran. */
  private keptSinceTick = false;

  constructor(
    private readonly filename: string,
    private readonly synchronous: string,
    private readonly writer: SqliteConnection,
    keepSnapshots: boolean,
  ) {
    if (filename === ":memory:") this.onWriter = new SqliteReader(writer);
    if (!keepSnapshots) this.changes = null;
  }

  private take(): PooledReader {
    const pooled = this.idle.pop();
    if (pooled) return pooled;
    const created = new SqliteConnection(this.filename, this.synchronous, true);
    this.all.push(created);
    return new PooledReader(created);
  }

  async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    if (this.onWriter) return fn(this.onWriter);
    const pooled = this.take();
    // The migrated statements, which carry the indexes still being built.
    pooled.conn.sql = this.writer.sql;
    const keep = this.begin(pooled);
    let kept = false;
    try {
      const value = await fn(pooled.reader);
      kept = keep;
      return value;
    } finally {
      // A read that threw ends its snapshot, whatever went wrong in it.
      if (!kept) pooled.end();
      this.idle.push(pooled);
      if (kept) this.keptOne();
    }
  }

  /**
   * Serves the read from the reader's kept snapshot while nothing has committed since, else begins
   * one; says whether the snapshot may be kept after the read.
   */
  private begin(pooled: PooledReader): boolean {
    // Not opened again when it failed: without a probe nothing is kept.
    if (this.changes === undefined) this.changes = CommitProbe.open(this.filename) ?? null;
    const changes = this.changes;
    if (pooled.open) {
      // Open between reads only when kept, hence watched.
      if (changes?.unchangedSince(pooled.mark)) return true;
      pooled.end();
    }
    const mark = changes?.mark();
    const keep = mark !== undefined;
    if (keep) pooled.mark = mark;
    pooled.conn.begin.run();
    pooled.open = true;
    return keep;
  }

  private keptOne(): void {
    this.keptSinceTick = true;
    if (this.idleTimer) return;
    this.idleTimer = tick("sqlite_idle_snapshots", IDLE_MS, () => {
      if (this.keptSinceTick) {
        this.keptSinceTick = false;
        return;
      }
      this.endIdleSnapshots();
    });
  }

  /** Ends the snapshots kept by readers not reading now; the writer calls it before each write. */
  endIdleSnapshots(): void {
    for (const pooled of this.idle) if (pooled.open) pooled.end();
    this.idleTimer?.stop();
    this.idleTimer = undefined;
  }

  close(): void {
    this.idleTimer?.stop();
    this.changes?.close();
    for (const c of this.all) c.db.close();
  }
}
