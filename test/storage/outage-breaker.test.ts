/**
 * The outage breaker's rules (src/backend/storage/outage-breaker.ts), with a probe the test
 * controls: slow work on a database that answers its probe is left alone; a failed probe refuses
 * the waiting caller and every new one at once; the first answering probe ends the outage.
 * Faults on a real server: test/postgres/faults/outage.test.ts ("fail fast").
 */
import { afterEach, describe, expect, it } from "vitest";
import { OutageBreaker } from "../../src/backend/storage/outage-breaker.ts";
import { eventually } from "../helpers/wait.ts";

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

let breaker: OutageBreaker | undefined;
afterEach(() => breaker?.close());

describe("OutageBreaker", () => {
  it("leaves slow work alone while the probe answers", async () => {
    let probes = 0;
    breaker = new OutageBreaker({ probe: async () => void probes++, suspectAfterMs: 5, probeIntervalMs: 5 });
    const slow = deferred<string>();
    const answer = breaker.run(() => slow.promise);
    await eventually(() => expect(probes).toBeGreaterThan(0));
    expect(breaker.isDown).toBe(false);
    slow.resolve("done");
    expect(await answer).toBe("done");
  });

  it("refuses the waiting caller and new ones at once when the probe fails, until a probe answers", async () => {
    let reachable = false;
    breaker = new OutageBreaker({
      probe: async () => {
        if (!reachable) throw new Error("no answer");
      },
      suspectAfterMs: 5,
      probeIntervalMs: 5,
    });
    const hung = deferred<string>();
    await expect(breaker.run(() => hung.promise)).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    expect(breaker.isDown).toBe(true);
    let started = 0;
    await expect(breaker.run(async () => void started++)).rejects.toMatchObject({
      code: "DATABASE_UNAVAILABLE",
    });
    expect(started).toBe(0);
    // The abandoned work settling later changes nothing.
    hung.resolve("late");
    reachable = true;
    await eventually(() => expect(breaker?.isDown).toBe(false));
    expect(await breaker.run(async () => "after")).toBe("after");
  });

  it("passes work's own failure through unchanged", async () => {
    breaker = new OutageBreaker({ probe: async () => {} });
    const failure = new Error("constraint");
    await expect(breaker.run(() => Promise.reject(failure))).rejects.toBe(failure);
  });
});
