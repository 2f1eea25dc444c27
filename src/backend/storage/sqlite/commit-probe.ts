/**
 * Whether any connection, in any process, has committed to a WAL-mode SQLite file since a moment,
 * asked on a connection of its own that never writes: its `PRAGMA data_version` changes whenever
 * another connection has committed since it last asked ("PRAGMA data_version" in SQLite's
 * documentation), and so it does when the log restarts.
 *
 * The pragma runs in a read transaction, but SQLite shares read locks on the log among the
 * connections of one process: while a reader of this process keeps a snapshot on the same state,
 * the probe takes and drops its lock without a system call. 0.17 µs in a loop, against 0.75 µs for
 * the `pread` of the `-shm` header it replaced, and 5.4 µs of server CPU per HTTP point read on a
 * machine where each system call is dear (decision 42). When nothing is kept (the first read, or
 * the first after a write), it costs the two `fcntl` calls of a read transaction.
 */
import Database from "@service-auth/better-sqlite3";

export class CommitProbe {
  private constructor(
    private readonly db: Database.Database,
    private readonly version: Database.Statement,
  ) {}

  /** A probe of `filename` (a database this process has open); undefined when it cannot be opened. */
  static open(filename: string): CommitProbe | undefined {
    try {
      // No busy timeout: a probe that finds the log locked (a recovery) answers "changed" at once
      // rather than block the event loop.
      const db = new Database(filename, { readonly: true, fileMustExist: true, timeout: 0 });
      return new CommitProbe(db, db.prepare("PRAGMA data_version").pluck());
    } catch {
      return undefined;
    }
  }

  /**
   * A mark of the database's state now, or undefined when it cannot be told. Take it before the
   * snapshot it stands for begins: a commit in between then only makes the snapshot look older.
   */
  mark(): number | undefined {
    try {
      return this.version.get() as number;
    } catch {
      return undefined;
    }
  }

  /** Whether nothing has committed since `mark` was taken. */
  unchangedSince(mark: number): boolean {
    return this.mark() === mark;
  }

  close(): void {
    this.db.close();
  }
}
