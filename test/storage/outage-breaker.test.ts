/**
 * The outage breaker's rules (src/backend/storage/outage-breaker.ts), with a probe the test
 * controls: slow work on a database that answers its probe is left alone; a failed probe refuses
 * the waiting caller and every new one at once; the first answering probe ends the outage. Any
 * transaction that succeeds is an answer too (a starved machine can fail a probe's fresh
 * connection while the database answers everything else).
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
    // The abandoned work failing later changes nothing.
    hung.resolve(Promise.reject(new Error("connection lost")) as any);
    await new Promise((r) => setTimeout(r, 20));
    expect(breaker.isDown).toBe(true);
    reachable = true;
    await eventually(() => expect(breaker?.isDown).toBe(false));
    expect(await breaker.run(async () => "after")).toBe("after");
  });

  it("does not trip when another transaction got an answer while the probe ran", async () => {
    const probe = deferred<void>();
    let probes = 0;
    breaker = new OutageBreaker({
      probe: () => {
        probes++;
        return probe.promise;
      },
      suspectAfterMs: 5,
      probeIntervalMs: 5,
    });
    const slow = deferred<string>();
    const answer = breaker.run(() => slow.promise);
    await eventually(() => expect(probes).toBe(1));
    expect(await breaker.run(async () => "answered")).toBe("answered");
    // The probe's fresh connection missed its deadline (a starved machine): slow, not down.
    probe.resolve(Promise.reject(new Error("no answer within 5 ms")) as any);
    await new Promise((r) => setTimeout(r, 20));
    expect(breaker.isDown).toBe(false);
    slow.resolve("done");
    expect(await answer).toBe("done");
  });

  it("ends the outage when a transaction started before it succeeds", async () => {
    breaker = new OutageBreaker({
      probe: () => Promise.reject(new Error("no answer")),
      suspectAfterMs: 5,
      probeIntervalMs: 60_000,
    });
    const hung = deferred<string>();
    await expect(breaker.run(() => hung.promise)).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    expect(breaker.isDown).toBe(true);
    // Its caller was refused, but the database answered it: reachable again.
    hung.resolve("late");
    await eventually(() => expect(breaker?.isDown).toBe(false));
    expect(await breaker.run(async () => "after")).toBe("after");
  });

  it("gives recovery probes that ran out of time twice as long each, up to the maximum", async () => {
    const deadlines: (number | undefined)[] = [];
    breaker = new OutageBreaker({
      // A server that answers nothing in time: each probe waits out its deadline.
      probe: (timeoutMs) => {
        deadlines.push(timeoutMs);
        return new Promise((_, reject) => setTimeout(() => reject(new Error("no answer")), timeoutMs ?? 1));
      },
      suspectAfterMs: 1,
      probeIntervalMs: 1,
      probeTimeoutMs: 10,
      maxProbeTimeoutMs: 80,
    });
    await expect(breaker.run(() => new Promise(() => {}))).rejects.toMatchObject({
      code: "DATABASE_UNAVAILABLE",
    });
    await eventually(() => expect(deadlines.length).toBeGreaterThanOrEqual(7));
    // The suspicion's probe uses the probe's own default; recovery ones 10, 20, 40, 80, 80, …
    expect(deadlines.slice(0, 7)).toEqual([undefined, 10, 20, 40, 80, 80, 80]);
  });

  it("keeps recovery probes short while the server refuses connections at once", async () => {
    const deadlines: (number | undefined)[] = [];
    breaker = new OutageBreaker({
      probe: (timeoutMs) => {
        deadlines.push(timeoutMs);
        return Promise.reject(new Error("connect ECONNREFUSED"));
      },
      suspectAfterMs: 1,
      probeIntervalMs: 1,
      probeTimeoutMs: 10,
    });
    await expect(breaker.run(() => new Promise(() => {}))).rejects.toMatchObject({
      code: "DATABASE_UNAVAILABLE",
    });
    await eventually(() => expect(deadlines.length).toBeGreaterThanOrEqual(5));
    expect(deadlines.slice(1, 5)).toEqual([10, 10, 10, 10]);
  });

  it("tells retries waiting for the database, once, when the outage ends", async () => {
    let reachable = false;
    breaker = new OutageBreaker({
      probe: async () => {
        if (!reachable) throw new Error("no answer");
      },
      suspectAfterMs: 1,
      probeIntervalMs: 1,
    });
    await expect(breaker.run(() => new Promise(() => {}))).rejects.toMatchObject({
      code: "DATABASE_UNAVAILABLE",
    });
    let told = 0;
    let unsubscribedTold = 0;
    breaker.onReachable(() => told++);
    const unsubscribe = breaker.onReachable(() => unsubscribedTold++);
    unsubscribe();
    await new Promise((r) => setTimeout(r, 20));
    expect(told).toBe(0); // still down
    reachable = true;
    await eventually(() => expect(told).toBe(1));
    expect(breaker.isDown).toBe(false);
    // Once: a later outage and recovery do not call it again.
    reachable = false;
    await expect(breaker.run(() => new Promise(() => {}))).rejects.toMatchObject({
      code: "DATABASE_UNAVAILABLE",
    });
    reachable = true;
    await eventually(() => expect(breaker?.isDown).toBe(false));
    expect(told).toBe(1);
    expect(unsubscribedTold).toBe(0);
  });

  it("passes work's own failure through unchanged", async () => {
    breaker = new OutageBreaker({ probe: async () => {} });
    const failure = new Error("constraint");
    await expect(breaker.run(() => Promise.reject(failure))).rejects.toBe(failure);
  });

  it("trips at once on a failure its owner saw, and ends the outage with the recovery probe only", async () => {
    let probes = 0;
    let fit = false;
    const tripped: unknown[] = [];
    breaker = new OutageBreaker({
      probe: async () => void probes++,
      recoveryProbe: async () => {
        if (!fit) throw new Error("not a standby");
      },
      recovery: { firstMs: 1, maxMs: 1, jitter: "none" },
      onTrip: (cause) => tripped.push(cause),
      name: "read replica",
    });
    const cause = new Error("connection lost");
    breaker.failed(cause);
    expect(breaker.isDown).toBe(true);
    expect(tripped).toEqual([cause]);
    await expect(breaker.run(async () => "refused")).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    // Its plain probe answers, but the recovery probe decides.
    await new Promise((r) => setTimeout(r, 20));
    expect(breaker.isDown).toBe(true);
    fit = true;
    await eventually(() => expect(breaker?.isDown).toBe(false));
    expect(probes).toBe(0);
    breaker.failed(cause);
    breaker.failed(cause);
    expect(tripped).toHaveLength(2); // once per outage
  });

  it("waits longer between recovery probes after each failed one, per its recovery policy", async () => {
    const startedAt: number[] = [];
    breaker = new OutageBreaker({
      probe: async () => {},
      recoveryProbe: async () => {
        startedAt.push(performance.now());
        throw new Error("connect ECONNREFUSED");
      },
      recovery: { firstMs: 20, maxMs: 80, jitter: "none" },
    });
    const failedAt = performance.now();
    breaker.failed(new Error("connect ECONNREFUSED"));
    await eventually(() => expect(startedAt.length).toBeGreaterThanOrEqual(5));
    const gaps = startedAt.slice(0, 5).map((at, i) => at - (i === 0 ? failedAt : startedAt[i - 1]));
    // At least 20, 40, 80, 80, 80 ms apart (a timer may fire a millisecond early; a load only later).
    for (const [i, wait] of [20, 40, 80, 80, 80].entries()) expect(gaps[i]).toBeGreaterThanOrEqual(wait - 5);
  });
});
