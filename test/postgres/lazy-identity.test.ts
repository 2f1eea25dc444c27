/**
 * An action's identity asked for lazily, from inside a transaction (the mutation it calls, or a
 * `runInTransaction` scope), on a PostgreSQL pool of two connections: steps 1+2 read in the
 * asking transaction, so no call holds a connection while waiting for another (which, with every
 * connection so held, would wait until the pool's connect timeout).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { authConfig, makeKeys, signToken, type TestKeys } from "../sync/fixtures/auth.ts";
import * as messages from "../sync/fixtures/messages.ts";
import schema from "../sync/fixtures/schema.ts";

/** More calls at once than the pool has connections. */
const CALLS = 6;

describe.skipIf(!postgresBinDir)("lazy identity on PostgreSQL", () => {
  const server = usePostgres();
  let backend: BackendRuntime;
  let keys: TestKeys;

  beforeAll(async () => {
    keys = await makeKeys("k1");
    const engine = new PostgresEngine({
      connectionString: await server().createDatabase(),
      maxConnections: 2,
    });
    backend = new BackendRuntime({
      schema,
      modules: { messages },
      engine,
      auth: authConfig({ keys: [keys] }),
    });
    await backend.start();
  });
  afterAll(() => backend?.close());

  /** A signed-in user's token; `name` is what `messages:send` records as the author. */
  async function signedIn(name: string) {
    const userId = await backend.write((db) => db.insert("users", { name, banned: false }));
    const sessionId = await backend.write((db) =>
      db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
    );
    return { userId, sessionId, token: await signToken(keys, { sub: userId, sessionId }) };
  }

  /** The authors of the messages in `channel`, sorted. */
  async function authorsIn(channel: string) {
    const rows = await backend.read((db) =>
      db
        .query("messages")
        .withIndex("by_channel", (q) => q.eq("channel", channel))
        .collect(),
    );
    return rows.map((m) => String(m.author)).sort();
  }

  it("resolves it inside the asking mutation's transaction", async () => {
    const users = await Promise.all(Array.from({ length: CALLS }, (_, i) => signedIn(`m${i}`)));
    // HTTP actions resolve the identity only when asked: here, by the mutation's handler.
    const ids = await Promise.all(
      users.map(async ({ token }) => {
        const ctx = await backend.actionCtx({ token }, false);
        return ctx.runMutation("messages:send" as never, { channel: "m", body: "hi" } as never);
      }),
    );
    expect(ids).toHaveLength(CALLS);
    expect(await authorsIn("m")).toEqual(users.map((_, i) => `m${i}`).sort());
  });

  it("resolves it inside a runInTransaction scope", async () => {
    const users = await Promise.all(Array.from({ length: CALLS }, (_, i) => signedIn(`s${i}`)));
    const names = await Promise.all(
      users.map(async ({ token }) => {
        const ctx = await backend.actionCtx({ token }, false);
        return ctx.runInTransaction(async () => {
          const identity = await ctx.auth.getUserIdentity();
          await ctx.runMutation("messages:send" as never, { channel: "s", body: "hi" } as never);
          return identity?.name;
        });
      }),
    );
    expect(names.sort()).toEqual(users.map((_, i) => `s${i}`).sort());
    expect(await authorsIn("s")).toEqual(users.map((_, i) => `s${i}`).sort());
  });

  it("resolves it in a scope before the scope's first write, so nothing uncommitted is cached", async () => {
    const { token } = await signedIn("before");
    const ctx = await backend.actionCtx({ token }, false);
    const seen = ctx.runInTransaction(async () => {
      await ctx.runMutation("messages:renameMe" as never, { name: "after" } as never);
      const identity = await ctx.auth.getUserIdentity();
      throw new Error(`rolled back, having seen ${identity?.name}`);
    });
    // The rename's own call resolved it, before renaming: its uncommitted name is not in it.
    await expect(seen).rejects.toThrow("rolled back, having seen before");
    const { value } = await backend.runQuery("messages:myName", {}, { token });
    expect(value).toBe("before");
  });

  it("refuses a revoked session inside the transaction", async () => {
    const { token, sessionId } = await signedIn("r");
    await backend.write((db) => db.delete("sessions", sessionId as never));
    const ctx = await backend.actionCtx({ token }, false);
    const send = ctx.runMutation("messages:send" as never, { channel: "r", body: "x" } as never);
    await expect(send).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await authorsIn("r")).toEqual([]);
  });

  it("resolves it again after a refusal, rather than refusing every later call", async () => {
    const { token, userId } = await signedIn("b");
    await backend.write((db) => db.patch(userId as never, { banned: true }));
    const ctx = await backend.actionCtx({ token }, false);
    const send = () => ctx.runMutation("messages:send" as never, { channel: "b", body: "x" } as never);
    await expect(send()).rejects.toMatchObject({ code: "ACCOUNT_BANNED" });
    await backend.write((db) => db.patch(userId as never, { banned: false }));
    await send();
    expect(await authorsIn("b")).toEqual(["b"]);
  });
});
