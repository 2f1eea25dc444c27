/**
 * The replay targets of replica reads (`storage/postgres/read-freshness.ts`): a read never joins a
 * target statement already sent (it may have been answered from before the read's caller saw its commit
 * acknowledged); reads arriving together share one statement; a failed statement is a typed
 * `ReplayTargetUnavailable`, and the next read sends a new one.
 */
import { describe, expect, it } from "vitest";
import {
  confirmFresh,
  positionOf,
  ReplayTargets,
  ReplayTargetUnavailable,
  StaleSnapshot,
} from "../../src/backend/storage/postgres/read-freshness.ts";

/** A head reader whose statements the test answers one by one, in order. */
function headReader() {
  const sent: { answer(head: number): void; fail(error: Error): void }[] = [];
  const read = () => new Promise<number>((resolve, reject) => sent.push({ answer: resolve, fail: reject }));
  return { read, sent };
}

describe("freshness replay targets", () => {
  it("a read arriving while a statement is on its way waits for the next one, shared by all such reads", async () => {
    const { read, sent } = headReader();
    const targets = new ReplayTargets(read);
    const first = targets.target();
    expect(sent).toHaveLength(1);
    const later = [targets.target(), targets.target()];
    // Not sent yet: only one statement in flight.
    expect(sent).toHaveLength(1);
    sent[0].answer(7);
    expect(await first).toBe(7);
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveLength(2);
    sent[1].answer(9);
    expect(await Promise.all(later)).toEqual([9, 9]);
    // Idle again: the next read sends at once.
    const again = targets.target();
    expect(sent).toHaveLength(3);
    sent[2].answer(10);
    expect(await again).toBe(10);
  });

  it("a failed statement rejects its reads with ReplayTargetUnavailable; the next read asks again", async () => {
    const { read, sent } = headReader();
    const targets = new ReplayTargets(read);
    const failing = targets.target();
    const queued = targets.target();
    sent[0].fail(new Error("connection refused"));
    await expect(failing).rejects.toBeInstanceOf(ReplayTargetUnavailable);
    await new Promise((r) => setImmediate(r));
    sent[1].answer(3);
    expect(await queued).toBe(3);
  });

  it("reads WAL positions as byte counts; no position (not a standby yet) is none", () => {
    expect(positionOf({ rows: [{ lsn: "352321536" }] })).toBe(352321536);
    expect(positionOf([{ lsn: "0" }])).toBe(0);
    expect(positionOf({ rows: [{ lsn: null }] })).toBeUndefined();
    expect(positionOf(undefined)).toBeUndefined();
  });

  it("a snapshot is fresh when the replay position read before it reached the replay target", () => {
    expect(() => confirmFresh(5, 5)).not.toThrow();
    expect(() => confirmFresh(6, 5)).not.toThrow();
    expect(() => confirmFresh(4, 5)).toThrow(StaleSnapshot);
    expect(() => confirmFresh(undefined, 0)).toThrow(StaleSnapshot);
  });
});
