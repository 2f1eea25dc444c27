/**
 * `CoalescedWrites` (http/coalesced-writes.ts), how the function endpoints write their answers:
 * none at once, all of a turn together and in order before the turn ends, a full batch at once, a
 * write that throws reported without losing the others.
 */
import { describe, expect, it } from "vitest";
import { CoalescedWrites, MAX_WAITING } from "../../src/backend/http/coalesced-writes.ts";

/** Resolves in the check phase of the current turn, after immediates queued before it. */
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function recorder() {
  const written: string[] = [];
  const errors: { error: unknown; target: string }[] = [];
  const writes = new CoalescedWrites<string, number, string>(
    (target, value, extra) => {
      if (extra === "throw") throw new Error(`refused ${target}`);
      written.push(`${target}:${value}:${extra}`);
    },
    (error, target) => errors.push({ error, target }),
  );
  return { writes, written, errors };
}

describe("CoalescedWrites", () => {
  it("writes nothing at once, then every write of the turn in order before the turn ends", async () => {
    const { writes, written } = recorder();
    writes.push("a", 1, "x");
    writes.push("b", 2, "y");
    await Promise.resolve();
    expect(written).toEqual([]);
    writes.push("c", 3, "z");
    await endOfTurn();
    expect(written).toEqual(["a:1:x", "b:2:y", "c:3:z"]);
    // The next turn's writes go out in the next turn.
    writes.push("d", 4, "w");
    expect(written).toHaveLength(3);
    await endOfTurn();
    expect(written).toEqual(["a:1:x", "b:2:y", "c:3:z", "d:4:w"]);
  });

  it(`writes a full batch of ${MAX_WAITING} at once, then the rest by the end of the turn`, async () => {
    const { writes, written } = recorder();
    for (let i = 0; i < MAX_WAITING - 1; i++) writes.push(`t${i}`, i, "");
    expect(written).toEqual([]);
    writes.push("full", MAX_WAITING - 1, "");
    expect(written).toHaveLength(MAX_WAITING);
    writes.push("after", 99, "");
    expect(written).toHaveLength(MAX_WAITING);
    await endOfTurn();
    expect(written.at(-1)).toBe("after:99:");
    expect(written.map((w) => w.split(":")[1])).toEqual([
      ...Array.from({ length: MAX_WAITING }, (_, i) => String(i)),
      "99",
    ]);
  });

  it("reports a write that throws and still makes the others", async () => {
    const { writes, written, errors } = recorder();
    writes.push("a", 1, "");
    writes.push("bad", 2, "throw");
    writes.push("c", 3, "");
    await endOfTurn();
    expect(written).toEqual(["a:1:", "c:3:"]);
    expect(errors).toHaveLength(1);
    expect(errors[0].target).toBe("bad");
    expect(String(errors[0].error)).toContain("refused bad");
  });

  it("a write queued while writing goes out in a later batch, not lost and not repeated", async () => {
    const written: string[] = [];
    const writes: CoalescedWrites<string, number, undefined> = new CoalescedWrites(
      (target) => {
        written.push(target);
        if (target === "first") writes.push("queued-by-first", 0, undefined);
      },
      () => {},
    );
    writes.push("first", 0, undefined);
    writes.push("second", 0, undefined);
    await endOfTurn();
    await endOfTurn();
    expect(written).toEqual(["first", "second", "queued-by-first"]);
  });
});
