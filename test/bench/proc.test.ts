/**
 * `bench/lib/proc.ts` splits a process's CPU time into user and system time (`pg-writes` reports
 * where CPU per mutation grows): work in JavaScript must land in user time, reads the kernel
 * serves in system time. Each loop runs until the figure it drives has grown, not for a set time.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { processCpuNs, processCpuSplitNs } from "../../bench/lib/proc.ts";

/** Runs `work` until `grown` holds of the split (ten million runs at most); returns whether it held. */
function until(work: () => void, grown: (split: { userNs: number; systemNs: number }) => boolean): boolean {
  for (let i = 0; i < 1e7; i++) {
    work();
    if (i % 64 === 0 && grown(processCpuSplitNs(process.pid))) return true;
  }
  return false;
}

describe("processCpuSplitNs", () => {
  it("charges a JavaScript loop to user time and reads from the kernel to system time", () => {
    const start = processCpuSplitNs(process.pid);
    let sink = 0;
    const computed = until(
      () => {
        for (let i = 0; i < 10_000; i++) sink += Math.sqrt(i);
      },
      (now) => now.userNs - start.userNs >= 200e6,
    );
    const afterCompute = processCpuSplitNs(process.pid);
    expect(computed).toBe(true);
    expect(sink).toBeGreaterThan(0);
    expect(afterCompute.systemNs - start.systemNs).toBeLessThan(afterCompute.userNs - start.userNs);

    const fd = openSync("/dev/zero", "r");
    const buffer = Buffer.alloc(1 << 20);
    try {
      const read = until(
        () => readSync(fd, buffer, 0, buffer.length, null),
        (now) => now.systemNs - afterCompute.systemNs >= 200e6,
      );
      const afterRead = processCpuSplitNs(process.pid);
      expect(read).toBe(true);
      expect(afterRead.systemNs - afterCompute.systemNs).toBeGreaterThan(
        afterRead.userNs - afterCompute.userNs,
      );
    } finally {
      closeSync(fd);
    }
  });

  it("sums to processCpuNs", () => {
    const split = processCpuSplitNs(process.pid);
    const total = processCpuNs(process.pid);
    // Read one after the other: the total may have gained the ticks of the moment between them.
    expect(total).toBeGreaterThanOrEqual(split.userNs + split.systemNs);
    expect(total - (split.userNs + split.systemNs)).toBeLessThan(1e9);
  });
});
