/**
 * Env reloads can overlap (commits of other instances, our own `_env` writes). A reload whose read
 * finishes late must not overwrite newer values with its older snapshot, or a new `JWKS` set
 * during a rotation silently reverts on this instance.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import type { ReadTransaction } from "../../src/backend/storage/engine.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import schema from "../sync/fixtures/schema.ts";

/** Real SQLite; a read's answer can be held back, like a slow database connection. */
class SlowAnswerEngine extends SqliteEngine {
  gate: Promise<void> | null = null;
  override async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    const gate = this.gate;
    const value = await super.read(fn);
    if (gate) await gate;
    return value;
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("env store reload order", () => {
  it("keeps the newest values when an older reload finishes last", async () => {
    const engine = new SlowAnswerEngine({ filename: tempDatabaseFile() });
    const backend = new BackendRuntime({ schema, modules: {}, engine });
    await backend.start();
    closers.push(() => backend.close());
    await backend.env.set("JWKS", "old");

    let open: () => void = () => {};
    engine.gate = new Promise((resolve) => (open = resolve));
    const late = backend.env.load(); // reads "old", answers late
    engine.gate = null;
    await backend.env.set("JWKS", "new");
    await backend.env.load();
    expect(backend.env.get("JWKS")).toBe("new");

    open();
    await late;
    expect(backend.env.get("JWKS")).toBe("new");
  });
});
