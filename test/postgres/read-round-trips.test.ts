/**
 * A read snapshot's round trips on the wire (docs/decisions.md 36): `BEGIN`, the commit log head
 * and the body's first statement go out in one write to the socket, COMMIT is not waited for, and
 * a statement that fails inside that pipeline leaves the pooled connection fit for the next read.
 * Counted on the one pooled connection's socket: writes, and round trips (a write answered before
 * the read resolved).
 */
import type { Socket } from "node:net";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { v } from "../../src/backend/values/index.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

const schema = defineSchema({
  people: defineTable({ name: v.string(), city: v.string() }).index("by_city", ["city"]),
});
const { query, mutation } = functionsFor(schema);
const modules = {
  people: {
    add: mutation({
      args: { name: v.string() },
      handler: (ctx, { name }) => ctx.db.insert("people", { name, city: "Paris" }),
    }),
    get: query({ args: { id: v.id("people") }, handler: (ctx, { id }) => ctx.db.get("people", id) }),
    inCity: query({
      args: { city: v.string() },
      handler: async (ctx, { city }) =>
        (
          await ctx.db
            .query("people")
            .withIndex("by_city", (q) => q.eq("city", city))
            .collect()
        ).map((p) => p.name),
    }),
  },
};

/** What a socket did: writes to it, and round trips (writes answered by data that came back). */
class WireCount {
  writes = 0;
  roundTrips = 0;
  private awaitingAnswer = false;

  constructor(socket: Socket) {
    // Corked messages reach the socket as one `_writev`; a lone message as one `_write`.
    const target = socket as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
    for (const method of ["_write", "_writev"] as const) {
      const original = target[method].bind(socket);
      target[method] = (...args: unknown[]) => {
        this.writes++;
        this.awaitingAnswer = true;
        return original(...args);
      };
    }
    socket.on("data", () => {
      if (this.awaitingAnswer) this.roundTrips++;
      this.awaitingAnswer = false;
    });
  }

  reset(): void {
    this.writes = 0;
    this.roundTrips = 0;
    this.awaitingAnswer = false;
  }
}

type PooledClient = Omit<pg.PoolClient, "connection"> & {
  processID: number;
  connection: { stream: Socket };
  _sentQueryQueue: unknown[];
  _getActiveQuery(): unknown;
};

describe.skipIf(!postgresBinDir)("PostgreSQL read round trips", () => {
  const server = usePostgres();

  /** Counts the wire of the one connection `pool` hands out, once it has been checked out. */
  function watch(pool: pg.Pool) {
    const clients = new Set<PooledClient>();
    pool.on("acquire", (client) => clients.add(client as unknown as PooledClient));
    return clients;
  }

  /** An engine with one pooled connection for transactions, its socket counted. */
  async function oneConnection() {
    const url = await server().createDatabase();
    const engine = new PostgresEngine({ connectionString: url, maxConnections: 1 });
    const catalog = new Catalog(schema);
    await engine.migrate(catalog.layout(), catalog.keysOf);
    const id = "ada";
    await engine.write(async (tx) => {
      const doc = { _id: id, _creationTime: 1, name: "Ada", city: "Paris" };
      await tx.insert("people", doc, catalog.keysOf("people", doc));
    });
    const pool = (engine as unknown as { pools: { main: pg.Pool } }).pools.main;
    const clients = watch(pool);
    // Warm: the statements are parsed on this connection (a first read also sends Parse, same write).
    expect(await engine.read((tx) => tx.get("people", id))).toMatchObject({ name: "Ada" });
    expect(clients.size).toBe(1);
    const [client] = clients;
    const wire = new WireCount(client.connection.stream);
    /** Resolves once the connection has no statement in flight (the last COMMIT answered). */
    const idle = () =>
      eventually(() => {
        expect(client._getActiveQuery() ?? null).toBeNull();
        expect(client._sentQueryQueue).toHaveLength(0);
      });
    return { engine, url, id, pool, clients, client, wire, idle };
  }

  it("answers a single-statement read after one round trip: BEGIN, head and statement in one write, COMMIT not awaited", async () => {
    const { engine, id, client, wire, idle } = await oneConnection();
    try {
      for (let i = 0; i < 3; i++) {
        await idle();
        wire.reset();
        const doc = await engine.read((tx) => tx.get("people", id));
        expect(doc).toMatchObject({ name: "Ada" });
        // One answered write (BEGIN; head; the SELECT); COMMIT is written but not yet answered.
        expect({ roundTrips: wire.roundTrips, writes: wire.writes }).toEqual({ roundTrips: 1, writes: 2 });
        expect(client._getActiveQuery() ?? client._sentQueryQueue[0]).toBeDefined();
      }
      // COMMIT is answered afterwards, on the same connection, which then serves the next read.
      await idle();
      expect(wire.roundTrips).toBe(2);
    } finally {
      await engine.close();
    }
  });

  it("costs a later statement its own round trip, and COMMIT none", async () => {
    const { engine, id, wire, idle } = await oneConnection();
    try {
      await idle();
      wire.reset();
      const names = await engine.read(async (tx) => {
        const first = await tx.get("people", id);
        const second = await tx.get("people", id);
        return [first?.name, second?.name];
      });
      expect(names).toEqual(["Ada", "Ada"]);
      expect({ roundTrips: wire.roundTrips, writes: wire.writes }).toEqual({ roundTrips: 2, writes: 3 });
    } finally {
      await engine.close();
    }
  });

  it("a statement failing inside the pipeline leaves the pooled connection serving the next read", async () => {
    const { engine, url, id, pool, client, idle } = await oneConnection();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const pid = client.processID;
      await idle();
      // The prepared SELECT now fails (relation does not exist): an error answered in the same
      // pipeline as BEGIN and the head, and not one that discards the connection.
      await admin.query("ALTER TABLE t_people RENAME TO t_people_away");
      await expect(engine.read((tx) => tx.get("people", id))).rejects.toMatchObject({ code: "42P01" });
      // A body that catches the error and answers anyway: the snapshot is aborted, nothing is answered.
      await expect(
        engine.read(async (tx) => {
          const doc = await tx.get("people", id).catch(() => null);
          return doc ?? "caught";
        }),
      ).rejects.toThrow(/rolled the transaction back/);
      await admin.query("ALTER TABLE t_people_away RENAME TO t_people");

      // The same connection, in no transaction, answers the next reads.
      expect(await engine.read((tx) => tx.get("people", id))).toMatchObject({ name: "Ada" });
      expect(await engine.read((tx) => tx.get("people", id))).toMatchObject({ name: "Ada" });
      expect(pool.totalCount).toBe(1);
      expect(client.processID).toBe(pid);
      await idle();
      const status = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      expect(status.rows[0].pid).toBe(pid);
      expect((client as unknown as { getTransactionStatus(): string }).getTransactionStatus()).toBe("I");
    } finally {
      await admin.end().catch(() => {});
      await engine.close();
    }
  });

  it("a query function reading one document, and one reading an index range, each wait for one round trip", async () => {
    const url = await server().createDatabase();
    const engine = new PostgresEngine({ connectionString: url, maxConnections: 1 });
    const backend = new BackendRuntime({ schema, modules, engine });
    await backend.start();
    try {
      const pool = (engine as unknown as { pools: { main: pg.Pool } }).pools.main;
      const clients = watch(pool);
      const { value: id } = await backend.runMutation("people:add", { name: "Ada" });
      expect((await backend.runQuery("people:get", { id })).value).toMatchObject({ name: "Ada" });
      expect((await backend.runQuery("people:inCity", { city: "Paris" })).value).toEqual(["Ada"]);
      expect(clients.size).toBe(1);
      const [client] = clients;
      const wire = new WireCount(client.connection.stream);
      for (const [path, args] of [
        ["people:get", { id }],
        ["people:inCity", { city: "Paris" }],
      ] as const) {
        await eventually(() => {
          expect(client._getActiveQuery() ?? null).toBeNull();
          expect(client._sentQueryQueue).toHaveLength(0);
        });
        wire.reset();
        await backend.runQuery(path, args);
        expect({ path, roundTrips: wire.roundTrips, writes: wire.writes }).toEqual({
          path,
          roundTrips: 1,
          writes: 2,
        });
      }
    } finally {
      await backend.close();
    }
  });
});
