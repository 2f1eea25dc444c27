/**
 * The SQLite engine's settings, apart from the engine so that its parts (connections, write lock,
 * cross-process wiring) can read them without importing the engine; `openEngine` fills them from
 * `DATABASE_URL`, `SQLITE_SYNCHRONOUS`, `DATABASE_BUSY_TIMEOUT_MS` and, in cluster mode, the
 * worker's wake-ups.
 */
import type { IndexBuildOptions } from "../indexes/build.ts";
import type { SqliteCommitLogOptions } from "./commit-log.ts";

export interface SqliteOptions {
  /** Path of the database file, or ":memory:" (tests only: no second connection can see it). */
  filename: string;
  /** `NORMAL` (default) survives process crashes; `FULL` also survives power loss. */
  synchronous?: "NORMAL" | "FULL";
  /** How often to look for commits by other processes (CLI), in ms. */
  pollIntervalMs?: number;
  /**
   * How long a mutation waits for a write lock held by another process (a CLI run, a `sqlite3`
   * shell) before it fails with `503 DATABASE_BUSY`, in ms (default 5000). The wait is
   * asynchronous: the event loop keeps serving meanwhile.
   */
  busyTimeoutMs?: number;
  /**
   * Cluster mode: several server processes share the file. Every commit is logged in its own
   * transaction and announced through `wakeups`; a request trusts a cached identity only once
   * this process has applied every commit its read snapshot sees (`sqlite/commit-log.ts`).
   * Absent (the default): one server process, no log, the write path as fast as without.
   */
  commitLog?: SqliteCommitLogOptions;
  /** How indexes added to tables that hold documents are built online (`INDEX_BUILD_BATCH`). */
  indexBuild?: IndexBuildOptions;
}

/** Default of {@link SqliteOptions.busyTimeoutMs}. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;
