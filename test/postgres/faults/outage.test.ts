/**
 * PostgreSQL faults injected for real while the service runs: a backend terminated or SIGKILLed
 * while a request holds its connection, the whole server frozen (SIGSTOP) and thawed. The service
 * must not crash, must answer a typed 503 DATABASE_UNAVAILABLE (HTTP and WebSocket) instead of
 * hanging, keep `/healthz` answering within 2 s, and recover by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { functionsFor } from "../../../src/backend/functions/define.ts";
import { defineSchema, defineTable } from "../../../src/backend/schema.ts";
import { PostgresEngine } from "../../../src/backend/storage/postgres/engine.ts";
import { v } from "../../../src/backend/values/index.ts";
import { BackendClient } from "../../../src/client/client.ts";
import { callFunction } from "../../helpers/http.ts";
import { postgresBinDir, usePostgres } from "../../helpers/postgres.ts";
import { startTestService, type TestService } from "../../helpers/service.ts";
import { eventually } from "../../helpers/wait.ts";
import { postmasterPid, signalServer } from "./pg-processes.ts";

const schema = defineSchema({ notes: defineTable({ text: v.string() }) });
const { query, mutation } = functionsFor();

/** A request parks inside its transaction here until the test has injected its fault. */
let gate = { entered: () => {}, release: Promise.resolve() };
function parkNext(): { entered: Promise<void>; open: () => void } {
  let entered!: () => void;
  let open!: () => void;
  const enteredP = new Promise<void>((r) => (entered = r));
  gate = { entered, release: new Promise<void>((r) => (open = r)) };
  return { entered: enteredP, open };
}

const notes = {
  add: mutation({ args: { text: v.string() }, handler: (ctx, { text }) => ctx.db.insert("notes", { text }) }),
  list: query({ args: {}, handler: (ctx) => ctx.db.query("notes").collect() }),
  /** Reads (so the transaction holds its connection), waits for the test, reads again. */
  parkedRead: query({
    args: {},
    handler: async (ctx) => {
      await ctx.db.query("notes").first();
      gate.entered();
      await gate.release;
      return ctx.db.query("notes").collect();
    },
  }),
  parkedAdd: mutation({
    args: { text: v.string() },
    handler: async (ctx, { text }) => {
      await ctx.db.query("notes").first();
      gate.entered();
      await gate.release;
      return ctx.db.insert("notes", { text });
    },
  }),
};

describe.skipIf(!postgresBinDir)("PostgreSQL faults", () => {
  const pg = usePostgres();
  let service: TestService;
  let database: string;

  beforeAll(async () => {
    const url = await pg().createDatabase();
    database = new URL(url).pathname.slice(1);
    // The test server runs with synchronous_commit=off: a crash restart (SIGKILL below) would lose
    // the last commits, the migration included. This database commits durably.
    await pg().sql(`ALTER DATABASE "${database}" SET synchronous_commit = on`);
    const engine = new PostgresEngine({
      connectionString: url,
      connectTimeoutMs: 1000,
      statementTimeoutMs: 1000,
      queryTimeoutMs: 1500,
    });
    service = await startTestService({ schema, modules: { notes }, engine });
    await pg().sql("CHECKPOINT");
  });
  afterAll(async () => {
    await service?.close();
  });

  /** The pid of the backend whose transaction is parked (idle in transaction). */
  const parkedBackend = () =>
    eventually(async () => {
      const rows = await pg().sql<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'service-auth' AND state = 'idle in transaction'",
        [database],
      );
      expect(rows, "the parked transaction's backend").toHaveLength(1);
      return rows[0].pid;
    });

  /** Waits until a query answers 200 again. */
  const recovered = () =>
    eventually(async () => {
      const r = await callFunction(service.url, "query", "notes:list");
      expect(r.status, "recovery").toBe(200);
      return r;
    });

  it("answers 503 DATABASE_UNAVAILABLE when the request's backend is terminated, and recovers", async () => {
    const parked = parkNext();
    const response = callFunction(service.url, "query", "notes:parkedRead");
    await parked.entered;
    const pid = await parkedBackend();
    await pg().sql("SELECT pg_terminate_backend($1)", [pid]);
    parked.open();
    const r = await response;
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ status: "error", code: "DATABASE_UNAVAILABLE" });
    // The very next request gets a fresh connection.
    const next = await callFunction(service.url, "mutation", "notes:add", { text: "after terminate" });
    expect(next.status).toBe(200);
  }, 30_000);

  it("answers 503 when the request's backend is SIGKILLed (server crash restart), and recovers", async () => {
    const parked = parkNext();
    const response = callFunction(service.url, "mutation", "notes:parkedAdd", { text: "lost" });
    await parked.entered;
    const pid = await parkedBackend();
    process.kill(pid, "SIGKILL");
    parked.open();
    const r = await response;
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    await recovered();
    const added = await callFunction(service.url, "mutation", "notes:add", { text: "after kill" });
    expect(added.status).toBe(200);
    const list = await callFunction(service.url, "query", "notes:list");
    expect(list.body.value.map((n: { text: string }) => n.text)).toContain("after kill");
    expect(list.body.value.map((n: { text: string }) => n.text)).not.toContain("lost");
  }, 60_000);

  it("answers /healthz 503 within 2 s and requests 503 (HTTP and WebSocket) while the server is frozen; recovers after SIGCONT", async () => {
    await recovered();
    const client = new BackendClient(service.url, { WebSocket: WebSocket as any });
    try {
      expect(await client.query("notes:list" as any, {})).toBeInstanceOf(Array);
      const postmaster = await postmasterPid(pg());
      signalServer(postmaster, "SIGSTOP");
      try {
        // The 2 s is the promise under test: the client gives up after it.
        const health = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(2000) });
        expect(health.status).toBe(503);
        const http = await callFunction(service.url, "mutation", "notes:add", { text: "frozen" });
        expect(http.status).toBe(503);
        expect(http.body).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
        const ws = await client.query("notes:list" as any, {}).then(
          () => undefined,
          (e) => e,
        );
        expect(ws).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
      } finally {
        signalServer(postmaster, "SIGCONT");
      }
      await eventually(async () => {
        const r = await fetch(`${service.url}/healthz`);
        expect(r.status, "healthz").toBe(200);
      });
      await recovered();
      expect(await client.query("notes:list" as any, {})).toBeInstanceOf(Array);
    } finally {
      client.close();
    }
  }, 60_000);
});

describe.skipIf(!postgresBinDir)("PostgreSQL frozen: fail fast", () => {
  const pg = usePostgres();
  let service: TestService;

  beforeAll(async () => {
    // Timeouts far beyond the test's waits: a request that answers at all while the server is
    // frozen was refused by the outage breaker, not by a timeout.
    const engine = new PostgresEngine({
      connectionString: await pg().createDatabase(),
      statementTimeoutMs: 60_000,
      queryTimeoutMs: 120_000,
    });
    service = await startTestService({ schema, modules: { notes }, engine });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("refuses the waiting request and every later one at once with 503, and recovers by itself after SIGCONT", async () => {
    expect((await callFunction(service.url, "mutation", "notes:add", { text: "before" })).status).toBe(200);
    const postmaster = await postmasterPid(pg());
    signalServer(postmaster, "SIGSTOP");
    try {
      // Waits for the frozen server until the breaker's probe fails (promised within 2 s; without
      // the breaker it would wait out the 120 s query timeout, past this test's own timeout).
      const waiting = await callFunction(service.url, "query", "notes:list");
      expect(waiting.status).toBe(503);
      expect(waiting.body).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
      // Known down now: the next requests are refused without touching the database.
      const [write, read, health] = await Promise.all([
        callFunction(service.url, "mutation", "notes:add", { text: "frozen" }),
        callFunction(service.url, "query", "notes:list"),
        fetch(`${service.url}/healthz`),
      ]);
      expect(write.body).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
      expect(read.body).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
      expect(health.status).toBe(503);
    } finally {
      signalServer(postmaster, "SIGCONT");
    }
    const after = await eventually(async () => {
      const r = await callFunction(service.url, "query", "notes:list");
      expect(r.status, "recovery").toBe(200);
      return r;
    });
    expect(after.body.value.map((n: { text: string }) => n.text)).toContain("before");
  }, 90_000);
});
