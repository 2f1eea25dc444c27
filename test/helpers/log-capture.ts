/**
 * What the platform logger writes, captured for assertions: its JSON lines go to stderr, so
 * stderr is replaced by a recorder. Call {@link setupLogCapture} once per test file; it restores
 * `LOG_LEVEL` and every spy after each test, so a test may set `LOG_LEVEL` freely.
 */
import { afterEach, vi } from "vitest";

export interface CaptureOptions {
  /** Record console output too (as `console.<method>: …`), to catch a bypass of the logger. */
  console?: boolean;
}

/** Registers the restoring `afterEach` and returns `capture`, which starts recording. */
export function setupLogCapture(options: CaptureOptions = {}): () => string[] {
  const saved = process.env.LOG_LEVEL;
  afterEach(() => {
    if (saved === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = saved;
    vi.restoreAllMocks();
  });
  return () => captureLogs(options);
}

/** The chunks written to stderr from now on (and console output, with `console: true`). */
function captureLogs(options: CaptureOptions): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: any) => {
    lines.push(String(chunk));
    return true;
  });
  if (options.console) {
    for (const m of ["log", "info", "warn", "error"] as const)
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
        lines.push(`console.${m}: ${args.map(String).join(" ")}`);
      });
  }
  return lines;
}
