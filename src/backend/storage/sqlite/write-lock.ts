/**
 * SQLite's one writer, in two layers. Within this process, write transactions (mutations, the
 * migration, creating the commit log) take turns in arrival order (`turn`). Across processes (a
 * CLI run, a `sqlite3` shell, the other workers of a cluster), the turn's holder then takes the
 * file's write lock with `BEGIN IMMEDIATE` (`begin`), retried with an asynchronous backoff while
 * another process holds it: SQLite's own `busy_timeout` would wait inside a synchronous call and
 * freeze the event loop.
 */
import { backoffDelayMs } from "../../../protocol/backoff.ts";
import { logger } from "../../logger.ts";
import { RETRY_POLICIES } from "../../retry/policies.ts";
import { databaseBusy, isBusy } from "../db-errors.ts";
import type { SqliteConnection } from "./connection.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A FIFO mutex: SQLite has one writer, so write transactions take turns. */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const acquired = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return acquired;
  }
}

export class SqliteWriteLock {
  private readonly turns = new Mutex();
  /** A wait for another process's write lock has been logged and has not ended yet. */
  private waitingLogged = false;
  /**
   * Another process held the write lock through a whole wait and has not let go since (a frozen
   * or forgotten transaction): writes try once and fail at once instead of each waiting it out.
   */
  private stuck = false;

  constructor(
    private readonly writer: SqliteConnection,
    private readonly filename: string,
    /** Runs before each `BEGIN IMMEDIATE`. */
    private readonly beforeBegin: () => void = () => {},
  ) {}

  /** Resolves when this process's earlier write transactions are done; call the release when done. */
  turn(): Promise<() => void> {
    return this.turns.lock();
  }

  /**
   * `BEGIN IMMEDIATE` on the writer, retried with an asynchronous backoff while another process
   * holds the write lock; past `deadline` (ms since epoch) the caller gets `503 DATABASE_BUSY`,
   * and so does every later caller at once, after one try, until the lock is free again (a
   * finite deadline only: the migration waits as long as it takes). The first wait is logged
   * once, naming the file. Call it holding the {@link turn}.
   */
  async begin(deadline: number): Promise<void> {
    const begin = this.writer.stmts.get("BEGIN IMMEDIATE");
    this.beforeBegin();
    for (let attempt = 0; ; attempt++) {
      try {
        begin.run();
        if (this.stuck || (attempt > 0 && this.waitingLogged)) {
          this.waitingLogged = false;
          this.stuck = false;
          logger.info("database write lock acquired", { file: this.filename });
        }
        return;
      } catch (error) {
        if (!isBusy(error)) throw error;
      }
      if (this.stuck && deadline !== Number.POSITIVE_INFINITY) throw databaseBusy();
      const left = deadline - Date.now();
      if (left <= 0) {
        this.stuck = true;
        logger.warn(
          "the database write lock is still held by another process: writes fail at once until it is free",
          {
            file: this.filename,
          },
        );
        throw databaseBusy();
      }
      if (!this.waitingLogged) {
        this.waitingLogged = true;
        logger.warn("waiting for the database write lock held by another process", {
          file: this.filename,
        });
      }
      await sleep(Math.min(left, backoffDelayMs(RETRY_POLICIES.writeLockWait, attempt)));
    }
  }
}
