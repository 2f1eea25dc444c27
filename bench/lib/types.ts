/**
 * The contract between `bench/run.ts` and a benchmark group. A group is one module under
 * `bench/` (platform, http, later auth and sync) that measures its own cases and returns rows
 * for the shared results table.
 */

/** One row of the printed table. Strings are already formatted (units included). */
export interface BenchRow {
  /** What was measured, e.g. "POST /api/query (indexed point read)". */
  benchmark: string;
  /** The headline figure: a throughput, a median latency or a ratio. */
  result: string;
  p50?: string;
  p99?: string;
  /** The goal in words, e.g. "≥ 60%" or "< 20 µs". */
  goal?: string;
  /** Whether the goal was met; omitted for rows without a goal. */
  ok?: boolean;
  /** Short context (settings, sample counts). */
  note?: string;
}

/** Services a group gets from the runner. */
export interface BenchContext {
  /** Progress output (stderr), so stdout stays the table. */
  log(message: string): void;
  /** A fresh directory under the OS temp dir, removed when the run ends. */
  tempDir(prefix: string): Promise<string>;
  /** Registers cleanup (stop a server, close a backend) run after the group, last in first out. */
  defer(cleanup: () => Promise<void> | void): void;
}

/** A benchmark group: registered by name in `bench/groups.ts`, selectable with `npm run bench -- <name>`. */
export interface BenchGroup {
  /** One line shown above the group's rows. */
  title: string;
  run(ctx: BenchContext): Promise<BenchRow[]>;
}
