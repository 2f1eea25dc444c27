/**
 * The Better Auth adapters' own promises, checked value by value where Better Auth's adapter suite
 * (adapter-conformance.test.ts) does not look: counts, fields without a value, dates in and out and
 * numbers that are not dates, renamed fields, `select`, the transaction of each adapter, what
 * `adapter.options` tells, and no debug logging unless asked for. Both adapters run on real SQLite
 * files: the direct one inside real functions, the HTTP one through the data functions.
 */
import type { BetterAuthOptions } from "better-auth";
import type { DBAdapter } from "better-auth/adapters";
import { afterAll, describe, expect, it, vi } from "vitest";
import { adapter, httpAdapter } from "../../src/auth/adapter.ts";
import { defineAuthTables } from "../../src/auth/schema/auth-schema.ts";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, type SchemaDefinition } from "../../src/backend/schema.ts";
import { v } from "../../src/backend/values/validators.ts";
import { startTestBackend } from "../helpers/service.ts";
import { authFunctions, directAdapterThroughFunctions, modulesFor } from "./fixtures/adapter-harness.ts";

type Options = Omit<BetterAuthOptions, "database">;
type Adapter = DBAdapter<BetterAuthOptions>;

/** Functions that build a direct adapter from their own ctx and report on it. */
function probes(tables: SchemaDefinition) {
  const { internalQuery, internalMutation } = functionsFor(tables);
  const describeAdapter = (ctx: any) => {
    const a = adapter(ctx, { schema: tables })({});
    const { serviceAdapter, writable } = a.options as { serviceAdapter?: string; writable?: boolean };
    return { id: a.id, serviceAdapter, writable };
  };
  return {
    inQuery: internalQuery({ args: {}, handler: async (ctx) => describeAdapter(ctx) }),
    inMutation: internalMutation({ args: {}, handler: async (ctx) => describeAdapter(ctx) }),
    /** Better Auth's `transaction` on the direct adapter: the callback's value comes back. */
    createInTransaction: internalMutation({
      args: { email: v.string() },
      handler: async (ctx, { email }) =>
        adapter(ctx, { schema: tables })({}).transaction((trx) =>
          trx.create({ model: "user", data: user(email) }),
        ),
    }),
  };
}

const backends: BackendRuntime[] = [];
afterAll(async () => {
  for (const b of backends) await b.close();
});

async function start(tables: SchemaDefinition): Promise<BackendRuntime> {
  const backend = await startTestBackend({
    schema: tables,
    modules: { ...modulesFor(tables), probe: probes(tables) },
  });
  backends.push(backend);
  return backend;
}

/** Both adapters over `backend`, by name. */
async function adapters(
  backend: BackendRuntime,
  tables: SchemaDefinition,
  options: Options = {},
): Promise<[string, Adapter][]> {
  const ctx = await backend.actionCtx({ allowInternal: true });
  return [
    ["direct", directAdapterThroughFunctions(backend, options, tables) as Adapter],
    ["http", httpAdapter(ctx, { authFunctions, schema: tables })(options)],
  ];
}

function user(email: string, extra: Record<string, unknown> = {}) {
  const now = new Date();
  return { email, name: "Someone", emailVerified: false, createdAt: now, updatedAt: now, ...extra };
}

/** A stored document as the database holds it, bypassing the adapters. */
async function stored(
  backend: BackendRuntime,
  table: string,
  id: string,
): Promise<Record<string, unknown> | null> {
  return backend.read((db) => db.get(table as any, id as any));
}

describe("both adapters", async () => {
  const options: Options = { rateLimit: { storage: "database" } };
  const tables = defineSchema(defineAuthTables(options));
  const backend = await start(tables);

  for (const [name, db] of await adapters(backend, tables, options)) {
    describe(name, () => {
      it("counts a model's documents, all of them or those a where matches", async () => {
        const domain = `${name}.count.test`;
        for (const [i, verified] of [true, false, false].entries())
          await db.create({ model: "user", data: user(`u${i}@${domain}`, { emailVerified: verified }) });
        const all = await db.count({
          model: "user",
          where: [{ field: "email", operator: "ends_with", value: domain }],
        });
        expect(all).toBe(3);
        const verified = await db.count({
          model: "user",
          where: [
            { field: "email", operator: "ends_with", value: domain },
            { field: "emailVerified", value: true },
          ],
        });
        expect(verified).toBe(1);
        expect(await db.count({ model: "user" })).toBeGreaterThanOrEqual(3);
      });

      it("reads a field without a value back as null, and keeps a string that looks like a date a string", async () => {
        const created = await db.create<Record<string, unknown>>({
          model: "user",
          data: user(`nulls@${name}.test`, { name: "2024-01-01" }),
        });
        const found = await db.findOne<Record<string, unknown>>({
          model: "user",
          where: [{ field: "id", value: created.id as string }],
        });
        expect(found?.image).toBeNull();
        expect(found?.name).toBe("2024-01-01");
        expect((await stored(backend, "user", created.id as string))?.name).toBe("2024-01-01");
      });

      it("stores dates as ms, reads them back as Dates, and compares a Date, an ISO string or ms alike", async () => {
        const expiresAt = new Date(Date.now() + 3_600_000);
        const u = await db.create<{ id: string }>({ model: "user", data: user(`dates@${name}.test`) });
        const s = await db.create<Record<string, unknown>, { id: string; expiresAt: Date }>({
          model: "session",
          data: { userId: u.id, token: `t-${name}`, expiresAt, createdAt: new Date(), updatedAt: new Date() },
        });
        expect(s.expiresAt).toBeInstanceOf(Date);
        expect(s.expiresAt.getTime()).toBe(expiresAt.getTime());
        expect((await stored(backend, "session", s.id))?.expiresAt).toBe(expiresAt.getTime());
        const byUser = { field: "userId", value: u.id };
        for (const value of [expiresAt, expiresAt.toISOString(), expiresAt.getTime()]) {
          const found = await db.findMany<{ id: string }>({
            model: "session",
            where: [byUser, { field: "expiresAt", operator: "eq", value: value as any }],
          });
          expect(found.map((f) => f.id)).toEqual([s.id]);
        }
        for (const value of [
          [new Date(0), expiresAt],
          [new Date(0).toISOString(), expiresAt.toISOString()],
          [expiresAt.toISOString()],
        ]) {
          const within = await db.findMany<{ id: string }>({
            model: "session",
            where: [byUser, { field: "expiresAt", operator: "in", value: value as any }],
          });
          expect(within.map((f) => f.id)).toEqual([s.id]);
        }
        const later = await db.findMany({
          model: "session",
          where: [
            byUser,
            { field: "expiresAt", operator: "gt", value: new Date(expiresAt.getTime() + 1).toISOString() },
          ],
        });
        expect(later).toEqual([]);
      });

      it("reads a date field holding null back as null, not as the epoch", async () => {
        const u = await db.create<{ id: string }>({ model: "user", data: user(`nulldate@${name}.test`) });
        const account = await db.create<Record<string, unknown>, { id: string }>({
          model: "account",
          data: {
            userId: u.id,
            accountId: u.id,
            providerId: "credential",
            accessTokenExpiresAt: null,
            createdAt: new Date(),
            updatedAt: new Date(),
          },
        });
        const found = await db.findOne<Record<string, unknown>>({
          model: "account",
          where: [{ field: "id", value: account.id }],
        });
        expect(found?.accessTokenExpiresAt).toBeNull();
      });

      it("reads numbers that are not dates back as numbers", async () => {
        const row = await db.create<{ id: string }>({
          model: "rateLimit",
          data: { key: `k-${name}`, count: 3, lastRequest: 1_700_000_000_000 },
        });
        const found = await db.findOne<Record<string, unknown>>({
          model: "rateLimit",
          where: [{ field: "id", value: row.id }],
        });
        expect(found).toMatchObject({ key: `k-${name}`, count: 3, lastRequest: 1_700_000_000_000 });
      });

      it("updates and deletes by where, one or many", async () => {
        const domain = `${name}.writes.test`;
        for (const i of [0, 1, 2]) await db.create({ model: "user", data: user(`w${i}@${domain}`) });
        // Outside the where: every write below must leave it as it is.
        const bystander = await db.create<{ id: string }>({
          model: "user",
          data: user(`by@${domain}.other`),
        });
        const mine = [{ field: "email", operator: "ends_with" as const, value: domain }];
        expect(await db.updateMany({ model: "user", where: mine, update: { name: "Renamed" } })).toBe(3);
        const one = await db.update<{ name: string }>({
          model: "user",
          where: [{ field: "email", value: `w0@${domain}` }],
          update: { name: "First" },
        });
        expect(one?.name).toBe("First");
        await db.delete({ model: "user", where: [{ field: "email", value: `w0@${domain}` }] });
        expect(await db.count({ model: "user", where: mine })).toBe(2);
        expect(await db.deleteMany({ model: "user", where: mine })).toBe(2);
        expect(await db.count({ model: "user", where: mine })).toBe(0);
        expect(await stored(backend, "user", bystander.id)).toMatchObject({ name: "Someone" });
      });

      it("returns only the selected fields", async () => {
        await db.create({ model: "user", data: user(`select@${name}.test`) });
        const found = await db.findOne<Record<string, unknown>>({
          model: "user",
          where: [{ field: "email", value: `select@${name}.test` }],
          select: ["email"],
        });
        expect(found).toEqual({ email: `select@${name}.test` });
        const withId = await db.findOne<Record<string, unknown>>({
          model: "user",
          where: [{ field: "email", value: `select@${name}.test` }],
          select: ["id", "email"],
        });
        expect(Object.keys(withId ?? {}).sort()).toEqual(["email", "id"]);
        expect(withId?.id).toEqual(expect.any(String));
      });
    });
  }
});

describe("renamed fields (user.fields: name → fullName, image → avatar)", () => {
  const options: Options = { user: { fields: { name: "fullName", image: "avatar" } } };

  it("stores a renamed field under its default name when the table has only that one", async () => {
    const tables = defineSchema(defineAuthTables({}));
    const backend = await start(tables);
    for (const [name, db] of await adapters(backend, tables, options)) {
      const created = await db.create<{ id: string; name: string }>({
        model: "user",
        data: user(`renamed@${name}.test`, { name: "Ann", image: "ann.png" }),
      });
      expect(created).toMatchObject({ name: "Ann", image: "ann.png" });
      const doc = await stored(backend, "user", created.id);
      expect(doc).toMatchObject({ name: "Ann", image: "ann.png" });
      expect(doc).not.toHaveProperty("fullName");
      expect(doc).not.toHaveProperty("avatar");
      const byName = await db.findMany<{ id: string }>({
        model: "user",
        where: [
          { field: "name", value: "Ann" },
          { field: "email", value: `renamed@${name}.test` },
        ],
        sortBy: { field: "name", direction: "asc" },
      });
      expect(byName.map((u) => u.id)).toEqual([created.id]);
      const picked = await db.findOne<Record<string, unknown>>({
        model: "user",
        where: [{ field: "id", value: created.id }],
        select: ["name"],
      });
      expect(picked).toEqual({ name: "Ann" });
    }
  });

  it("stores it under the configured name when the table declares that one", async () => {
    const tables = defineSchema(defineAuthTables({ user: { fields: { name: "fullName" } } }));
    const backend = await start(tables);
    for (const [name, db] of await adapters(backend, tables, options)) {
      const created = await db.create<{ id: string; name: string }>({
        model: "user",
        data: user(`declared@${name}.test`, { name: "Bea" }),
      });
      expect(created.name).toBe("Bea");
      const doc = await stored(backend, "user", created.id);
      expect(doc).toMatchObject({ fullName: "Bea" });
      expect(doc).not.toHaveProperty("name");
    }
  });
});

describe("transactions and what the adapters tell", () => {
  it("runs Better Auth's transaction as one write transaction through the HTTP adapter: all or nothing", async () => {
    const backend = await start(defineSchema(defineAuthTables({})));
    const ctx = await backend.actionCtx({ allowInternal: true });
    const db = httpAdapter(ctx, { authFunctions })({});
    await expect(
      db.transaction(async (trx) => {
        await trx.create({ model: "user", data: user("rolled-back@tx.test") });
        throw new Error("after the insert");
      }),
    ).rejects.toThrow("after the insert");
    expect(await db.count({ model: "user", where: [{ field: "email", value: "rolled-back@tx.test" }] })).toBe(
      0,
    );
    const kept = await db.transaction((trx) =>
      trx.create<{ email: string }>({ model: "user", data: user("kept@tx.test") }),
    );
    expect(kept.email).toBe("kept@tx.test");
  });

  it("runs the transaction's callback without one when the ctx has no runInTransaction", async () => {
    const backend = await start(defineSchema(defineAuthTables({})));
    const { runQuery, runMutation } = await backend.actionCtx({ allowInternal: true });
    const db = httpAdapter({ runQuery, runMutation }, { authFunctions })({});
    const created = await db.transaction((trx) =>
      trx.create<{ email: string }>({ model: "user", data: user("plain@tx.test") }),
    );
    expect(created.email).toBe("plain@tx.test");
  });

  it("joins the caller's transaction on the direct adapter and returns the callback's value", async () => {
    const backend = await start(defineSchema(defineAuthTables({})));
    const { value } = await backend.runMutation(
      "probe:createInTransaction",
      { email: "direct@tx.test" },
      { allowInternal: true },
    );
    expect(value).toMatchObject({ email: "direct@tx.test" });
  });

  it("names itself and says whether writes are possible", async () => {
    const backend = await start(defineSchema(defineAuthTables({})));
    const caller = { allowInternal: true };
    expect((await backend.runQuery("probe:inQuery", {}, caller)).value).toEqual({
      id: "service-db",
      serviceAdapter: "direct",
      writable: false,
    });
    expect((await backend.runMutation("probe:inMutation", {}, caller)).value).toEqual({
      id: "service-db",
      serviceAdapter: "direct",
      writable: true,
    });
    const http = httpAdapter(await backend.actionCtx({ allowInternal: true }), { authFunctions })({});
    expect(http.id).toBe("service-http");
    expect(http.options).toMatchObject({ serviceAdapter: "http", writable: true });
  });

  it("logs nothing about its calls unless debugLogs asks", async () => {
    const backend = await start(defineSchema(defineAuthTables({})));
    const ctx = await backend.actionCtx({ allowInternal: true });
    // Better Auth's adapter factory writes its debug lines with console.log, past `options.logger`.
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const mentions = () =>
        log.mock.calls.filter((c) => c.some((a) => String(a).includes("Service DB"))).length;
      await httpAdapter(ctx, { authFunctions })({}).count({ model: "user" });
      expect(mentions()).toBe(0);
      await httpAdapter(ctx, { authFunctions, debugLogs: true })({}).count({ model: "user" });
      expect(mentions()).toBeGreaterThan(0);
    } finally {
      log.mockRestore();
    }
  });
});
