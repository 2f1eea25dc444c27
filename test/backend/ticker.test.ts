/** The engine's one periodic mechanism: named tasks, run on their period, each run timed in a metric. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { logger } from "../../src/backend/logger.ts";
import { metricsRegistry } from "../../src/backend/metrics/metrics.ts";
import { type TickerTask, tick } from "../../src/backend/ticker.ts";

const METRIC = "service_auth_periodic_task_duration_seconds";

/** The runs the metric counted for `task` (its `_count`). */
async function runsOf(task: TickerTask): Promise<number> {
  const text = await metricsRegistry.getSingleMetricAsString(METRIC);
  const line = text.split("\n").find((l) => l.startsWith(`${METRIC}_count{task="${task}"}`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("tick", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("runs the task every period until stopped, counting each run under its name", async () => {
    const before = await runsOf("sync_sweep");
    let runs = 0;
    const ticking = tick("sync_sweep", 100, () => {
      runs++;
    });
    vi.advanceTimersByTime(99);
    expect(runs).toBe(0);
    vi.advanceTimersByTime(1);
    expect(runs).toBe(1);
    vi.advanceTimersByTime(300);
    expect(runs).toBe(4);
    expect((await runsOf("sync_sweep")) - before).toBe(4);
    ticking.stop();
    vi.advanceTimersByTime(1000);
    expect(runs).toBe(4);
    expect((await runsOf("sync_sweep")) - before).toBe(4);
  });

  it("times a run that returns a promise until it settles, and logs a rejection with the task's name", async () => {
    const warn = vi.spyOn(logger, "warn").mockImplementation(() => {});
    const before = await runsOf("commit_log_prune");
    let fail: (error: Error) => void = () => {};
    const ticking = tick("commit_log_prune", 50, () => new Promise((_, reject) => (fail = reject)));
    vi.advanceTimersByTime(50);
    await Promise.resolve();
    expect((await runsOf("commit_log_prune")) - before).toBe(0); // still running
    fail(new Error("log table gone"));
    await vi.waitFor(async () => expect((await runsOf("commit_log_prune")) - before).toBe(1));
    expect(warn).toHaveBeenCalledWith("periodic task failed", {
      task: "commit_log_prune",
      error: "Error: log table gone",
    });
    ticking.stop();
  });

  it("does not keep the process alive", () => {
    const spy = vi.spyOn(globalThis, "setInterval");
    const ticking = tick("notify_heartbeat", 10, () => {});
    const timer = spy.mock.results[0].value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    ticking.stop();
  });
});
