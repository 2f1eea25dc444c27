/**
 * Whether any connection, in any process, has committed to a WAL-mode SQLite file since a moment,
 * asked without a transaction. Every commit rewrites the WAL-index header at the start of the
 * file's `-shm` file ("The WAL-Index Format" in SQLite's file format document: its first 48 bytes,
 * whose `iChange` counts the commits), and so does every restart of the log. One `pread` of those
 * bytes costs less than what a read transaction spends finding out the same (BEGIN, a lock and an
 * unlock of the file, COMMIT), so a reader that kept its snapshot open can tell whether that
 * snapshot is still the newest.
 *
 * A header read while a writer rewrites it either still equals the one before (that commit had
 * not finished: its caller had not been answered yet) or differs from both, which only costs a
 * fresh snapshot. SQLite writes the copy read here last.
 */
import { closeSync, openSync, readSync } from "node:fs";

/** Bytes of the header's first copy. */
const HEADER_BYTES = 48;

export class WalChanges {
  private readonly current = Buffer.alloc(HEADER_BYTES);

  private constructor(private readonly fd: number) {}

  /**
   * Watches the `-shm` file of `filename` (a database in WAL mode that this process has open);
   * undefined when it cannot be read, and then nothing can be told.
   */
  static open(filename: string): WalChanges | undefined {
    try {
      const changes = new WalChanges(openSync(`${filename}-shm`, "r"));
      if (changes.read()) return changes;
      changes.close();
    } catch {
      // No such file: not in WAL mode, or SQLite keeps the index elsewhere.
    }
    return undefined;
  }

  /** False when the header could not be read: the caller then takes no snapshot as current. */
  private read(): boolean {
    try {
      return readSync(this.fd, this.current, 0, HEADER_BYTES, 0) === HEADER_BYTES;
    } catch {
      return false;
    }
  }

  /** A mark's room: {@link markNow} fills it. */
  static newMark(): Buffer {
    return Buffer.alloc(HEADER_BYTES);
  }

  /**
   * Writes the header as it is now into `mark`; false when it could not be read. Take it before
   * the snapshot it stands for begins: a commit in between then only makes the snapshot look older.
   */
  markNow(mark: Buffer): boolean {
    if (!this.read()) return false;
    this.current.copy(mark);
    return true;
  }

  /** Whether nothing has committed since `mark` was taken. */
  unchangedSince(mark: Buffer): boolean {
    return this.read() && this.current.equals(mark);
  }

  close(): void {
    closeSync(this.fd);
  }
}
