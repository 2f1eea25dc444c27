/**
 * The auth data layer on real SQLite files: where operators and connectors, sortBy/limit/offset,
 * index use (read sets and an engine spy), index-only counts, triggers in the same transaction,
 * unique fields, validation, and the query-ctx write refusal.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { adapter } from "../../src/auth/adapter.ts";
import { dbCreate } from "../../src/auth/data/create.ts";
import { createApi } from "../../src/auth/data/functions.ts";
import type { StoredDoc } from "../../src/auth/data/types.ts";
import { authEntSchema, defineAuthTables } from "../../src/auth/schema/auth-schema.ts";
import type { WhereClause } from "../../src/auth/where/index.ts";
import { customMutation, functionsFor } from "../../src/backend/functions/define.ts";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import type { ReadTransaction, StorageEngine } from "../../src/backend/storage/engine.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: {
      fields: { username: v.optional(v.string()), age: v.optional(v.number()) },
      indexes: { username: ["username"], age: ["age"] },
    },
  }),
  profile: defineTable({ userId: v.id("user"), bio: v.string() }).index("userId", ["userId"]),
  stats: defineTable({ users: v.number() }),
});
const { internalMutation, internalQuery } = functionsFor(schema);

/** Counts the engine calls made inside reads (a spy around the real engine, not a replacement). */
interface EngineCalls {
  scans: number;
  scannedRows: number;
  counts: number;
  gets: number;
}
function spyOnReads(engine: StorageEngine): EngineCalls {
  const calls: EngineCalls = { scans: 0, scannedRows: 0, counts: 0, gets: 0 };
  const read = engine.read.bind(engine);
  engine.read = (fn) =>
    read((tx: ReadTransaction) =>
      fn({
        get: (table, id) => {
          calls.gets++;
          return tx.get(table, id);
        },
        scan: async (req) => {
          calls.scans++;
          const rows = await tx.scan(req);
          calls.scannedRows += rows.length;
          return rows;
        },
        count: (table, index, range) => {
          calls.counts++;
          return tx.count(table, index, range);
        },
      }),
    );
  return calls;
}

const now = 1_700_000_000_000;
const user = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  email: `${name}@example.com`,
  emailVerified: false,
  createdAt: now,
  updatedAt: now,
  ...extra,
});

async function start(modules: Record<string, Record<string, unknown>>) {
  const engine = new SqliteEngine({ filename: tempDatabaseFile() });
  const backend = new BackendRuntime({ schema, modules, engine });
  await backend.start();
  return { backend, engine };
}

const internal = { allowInternal: true };

describe("where, sortBy, limit, offset, count", () => {
  let backend: BackendRuntime;
  let calls: EngineCalls;
  const ids: Record<string, string> = {};

  const findMany = async (args: Record<string, unknown>) =>
    (await backend.runQuery("auth:findMany", { model: "user", ...args }, internal)) as {
      value: StoredDoc[];
      readSet: any;
    };
  const names = async (where: WhereClause[], extra: Record<string, unknown> = {}) =>
    (await findMany({ where, ...extra })).value.map((d) => d.name).sort();
  const count = async (where?: WhereClause[]) =>
    (await backend.runQuery("auth:count", { model: "user", where }, internal)).value as number;

  beforeAll(async () => {
    const started = await start({ auth: createApi(schema) });
    backend = started.backend;
    const people: [string, Record<string, unknown>][] = [
      ["ann", { username: "ann1", age: 31, role: "admin" }],
      ["bob", { username: "bob1", age: 25 }],
      ["cid", { username: "cid1", age: 40, role: "user" }],
      ["dee", { age: 25 }],
      ["eve", { username: "eve1" }],
      ["fay", { username: "fay1", age: 52, role: "user" }],
    ];
    for (const [name, extra] of people) {
      const doc = (
        await backend.runMutation("auth:create", { model: "user", data: user(name, extra) }, internal)
      ).value as StoredDoc;
      ids[name] = doc._id;
    }
    calls = spyOnReads(started.engine);
  });
  afterAll(() => backend.close());

  test("every operator", async () => {
    expect(await names([{ field: "age", operator: "eq", value: 25 }])).toEqual(["bob", "dee"]);
    expect(await names([{ field: "age", operator: "ne", value: 25 }])).toEqual(["ann", "cid", "eve", "fay"]);
    expect(await names([{ field: "age", operator: "lt", value: 31 }])).toEqual(["bob", "dee"]);
    expect(await names([{ field: "age", operator: "lte", value: 31 }])).toEqual(["ann", "bob", "dee"]);
    expect(await names([{ field: "age", operator: "gt", value: 31 }])).toEqual(["cid", "fay"]);
    expect(await names([{ field: "age", operator: "gte", value: 31 }])).toEqual(["ann", "cid", "fay"]);
    expect(await names([{ field: "username", operator: "in", value: ["ann1", "eve1", "zzz"] }])).toEqual([
      "ann",
      "eve",
    ]);
    expect(await names([{ field: "username", operator: "not_in", value: ["ann1", "eve1"] }])).toEqual([
      "bob",
      "cid",
      "dee",
      "fay",
    ]);
    expect(await names([{ field: "email", operator: "contains", value: "e@exa" }])).toEqual(["dee", "eve"]);
    expect(await names([{ field: "name", operator: "starts_with", value: "f" }])).toEqual(["fay"]);
    expect(await names([{ field: "name", operator: "ends_with", value: "e" }])).toEqual(["dee", "eve"]);
    expect(await names([{ field: "_id", operator: "eq", value: ids.cid }])).toEqual(["cid"]);
    expect(await names([{ field: "_id", operator: "in", value: [ids.ann, ids.bob, "malformed"] }])).toEqual([
      "ann",
      "bob",
    ]);
    // null means "no value": it matches a missing field.
    expect(await names([{ field: "role", operator: "eq", value: null }])).toEqual(["bob", "dee", "eve"]);
    expect(await names([{ field: "role", operator: "ne", value: null }])).toEqual(["ann", "cid", "fay"]);
    // Comparisons hold only between values of one type: a string bound never matches numbers.
    expect(await names([{ field: "age", operator: "gt", value: "1" }])).toEqual([]);
  });

  test("AND / OR fold left like Better Auth's memory adapter", async () => {
    const and: WhereClause[] = [
      { field: "age", operator: "gte", value: 25, connector: "AND" },
      { field: "age", operator: "lt", value: 40, connector: "AND" },
    ];
    expect(await names(and)).toEqual(["ann", "bob", "dee"]);
    // `a, OR b` is a || b (an "AND group ∧ any OR" reading would give a && b = []).
    expect(
      await names([
        { field: "name", value: "ann", connector: "AND" },
        { field: "name", value: "bob", connector: "OR" },
      ]),
    ).toEqual(["ann", "bob"]);
    // `a, OR b, AND c` is (a || b) && c.
    expect(
      await names([
        { field: "username", value: "ann1" },
        { field: "username", value: "bob1", connector: "OR" },
        { field: "age", operator: "gt", value: 30, connector: "AND" },
      ]),
    ).toEqual(["ann"]);
    // `a, AND b, OR c` is (a && b) || c.
    expect(
      await names([
        { field: "age", value: 25 },
        { field: "username", value: "bob1", connector: "AND" },
        { field: "name", value: "fay", connector: "OR" },
      ]),
    ).toEqual(["bob", "fay"]);
  });

  test("sortBy, limit and offset", async () => {
    const byAge = (await findMany({ sortBy: { field: "age", direction: "asc" } })).value.map((d) => d.name);
    // Missing values sort first (index order), ties by creation.
    expect(byAge).toEqual(["eve", "bob", "dee", "ann", "cid", "fay"]);
    const desc = (
      await findMany({ sortBy: { field: "name", direction: "desc" }, limit: 2, offset: 1 })
    ).value.map((d) => d.name);
    expect(desc).toEqual(["eve", "dee"]);
    const filtered = await findMany({
      where: [{ field: "age", operator: "gte", value: 25 }],
      sortBy: { field: "age", direction: "desc" },
      limit: 2,
    });
    expect(filtered.value.map((d) => d.name)).toEqual(["fay", "cid"]);
    const paged = await findMany({ limit: 2, offset: 4 });
    expect(paged.value.map((d) => d.name)).toEqual(["eve", "fay"]);
    expect((await findMany({ limit: 0 })).value).toEqual([]);
    await expect(findMany({ offset: -1 })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  test("reads use the matching index and stop at offset + limit", async () => {
    const byEmail = await findMany({ where: [{ field: "email", value: "cid@example.com" }] });
    expect(byEmail.value.map((d) => d.name)).toEqual(["cid"]);
    expect(byEmail.readSet.ranges.map((r: any) => r.index)).toEqual(["email"]);

    const byId = await findMany({ where: [{ field: "_id", value: ids.bob }] });
    expect(byId.readSet.ids).toEqual([{ table: "user", id: ids.bob }]);
    expect(byId.readSet.ranges).toEqual([]);

    // An OR whose branches each have an index reads each index, merged by id.
    const either = await findMany({
      where: [
        { field: "email", value: "ann@example.com" },
        { field: "username", value: "fay1", connector: "OR" },
      ],
    });
    expect(either.value.map((d) => d.name).sort()).toEqual(["ann", "fay"]);
    expect(either.readSet.ranges.map((r: any) => r.index).sort()).toEqual(["email", "username"]);

    // A range with sortBy on the same index reads in order and stops after `limit` rows.
    const before = calls.scannedRows;
    const oldest = await findMany({
      where: [{ field: "age", operator: "gt", value: 20 }],
      sortBy: { field: "age", direction: "asc" },
      limit: 1,
    });
    expect(oldest.value.map((d) => d.name)).toEqual(["bob"]);
    expect(oldest.readSet.ranges.map((r: any) => r.index)).toEqual(["age"]);
    expect(calls.scannedRows - before).toBe(1);

    const start2 = calls.scannedRows;
    expect((await findMany({ limit: 2 })).value).toHaveLength(2);
    expect(calls.scannedRows - start2).toBe(2);
  });

  test("count uses index counts and loads no documents when an index answers the where", async () => {
    const snapshot = () => ({ ...calls });
    let before = snapshot();
    expect(await count()).toBe(6);
    expect(calls.scans - before.scans).toBe(0);
    expect(calls.gets - before.gets).toBe(0);
    expect(calls.counts - before.counts).toBe(1);

    before = snapshot();
    expect(await count([{ field: "email", value: "ann@example.com" }])).toBe(1);
    expect(await count([{ field: "username", operator: "in", value: ["ann1", "bob1", "nobody"] }])).toBe(2);
    expect(await count([{ field: "age", operator: "gte", value: 31 }])).toBe(3);
    expect(await count([{ field: "username", value: null }])).toBe(1);
    expect(calls.scans - before.scans).toBe(0);
    expect(calls.counts - before.counts).toBe(1 + 3 + 1 + 2);

    // Not answerable by an index alone: documents are read, the number is still right.
    before = snapshot();
    expect(await count([{ field: "name", operator: "contains", value: "e" }])).toBe(2);
    expect(calls.scans - before.scans).toBeGreaterThan(0);
  });

  test("bad where input is a typed error", async () => {
    await expect(names([{ field: "nope", value: 1 }])).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(names([{ field: "age", operator: "in", value: 3 as any }])).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(backend.runQuery("auth:findMany", { model: "profile" }, internal)).rejects.toMatchObject({
      code: "INVALID_ARGUMENTS",
    });
  });
});

describe("writes: triggers, unique fields, validation, read-only ctx", () => {
  let backend: BackendRuntime;
  let failProfile = false;

  // An application-level trigger through the custom internalMutation wrapper: keeps a user count.
  const countingMutation = customMutation(internalMutation, (ctx) => {
    const db = ctx.db;
    const wrapped = Object.create(db) as typeof db;
    wrapped.insert = (async (table: string, value: any) => {
      const id = await db.insert(table as any, value);
      if (table === "user") {
        const stats = await db.query("stats").first();
        if (stats) await db.patch("stats", stats._id, { users: stats.users + 1 });
        else await db.insert("stats", { users: 1 });
      }
      return id;
    }) as any;
    return { ...ctx, db: wrapped };
  });

  const api = createApi(schema, {
    internalMutation: countingMutation,
    triggers: {
      user: {
        beforeCreate: async (_ctx, data) => ({ ...data, username: data.email.split("@")[0] }),
        onCreate: async (ctx, doc) => {
          await ctx.db.insert("profile", { userId: doc._id, bio: `hi ${doc.name}` });
          if (failProfile) throw new Error("profile service down");
        },
        beforeUpdate: async (_ctx, _doc, update) =>
          update.name ? { ...update, name: update.name.toUpperCase() } : undefined,
        onUpdate: async (ctx, next, old) => {
          const profile = await ctx.db
            .query("profile")
            .withIndex("userId", (q) => q.eq("userId", next._id))
            .first();
          if (profile) await ctx.db.patch("profile", profile._id, { bio: `${old.name} is now ${next.name}` });
        },
        beforeDelete: async (_ctx, doc) => {
          if (doc.role === "admin") throw new Error("admins cannot be deleted");
        },
        onDelete: async (ctx, doc) => {
          for (const p of await ctx.db
            .query("profile")
            .withIndex("userId", (q) => q.eq("userId", doc._id))
            .collect()) {
            await ctx.db.delete("profile", p._id);
          }
        },
      },
    },
  });
  const probe = {
    directCreateInQuery: internalQuery({
      args: {},
      handler: async (ctx) => {
        const db = adapter(ctx, { schema })({});
        return db.create({
          model: "user",
          data: {
            name: "q",
            email: "q@example.com",
            emailVerified: false,
            createdAt: new Date(),
            updatedAt: new Date(),
          },
        });
      },
    }),
    directRoundTrip: internalMutation({
      args: {},
      handler: async (ctx) => {
        const db = adapter(ctx, { schema })({});
        const created = await db.create<Record<string, any>>({
          model: "user",
          data: {
            name: "dana",
            email: "dana@example.com",
            emailVerified: true,
            createdAt: new Date(now),
            updatedAt: new Date(now),
          },
        });
        const stored = await ctx.db.get("user", created.id);
        const found = await db.findOne<Record<string, any>>({
          model: "user",
          where: [{ field: "email", value: "dana@example.com" }],
        });
        return { created, stored, found, createdAtIsDate: found?.createdAt instanceof Date };
      },
    }),
  };

  const create = (data: Record<string, unknown>, model = "user") =>
    backend.runMutation("auth:create", { model, data }, internal);
  const all = async (table: string) =>
    (await backend.read(async (db) => db.query(table).collect())) as StoredDoc[];

  beforeAll(async () => {
    backend = (await start({ auth: api, probe })).backend;
  });
  afterAll(() => backend.close());

  test("beforeCreate replaces the data, onCreate and the app trigger write in the same transaction", async () => {
    const doc = (await create(user("gus"))).value as StoredDoc;
    expect(doc.username).toBe("gus");
    const profiles = await all("profile");
    expect(profiles).toMatchObject([{ userId: doc._id, bio: "hi gus" }]);
    expect(await all("stats")).toMatchObject([{ users: 1 }]);
  });

  test("a throwing trigger leaves nothing behind", async () => {
    failProfile = true;
    try {
      await expect(create(user("hal"))).rejects.toThrow("profile service down");
    } finally {
      failProfile = false;
    }
    expect((await all("user")).map((u) => u.name)).not.toContain("hal");
    expect(await all("profile")).toHaveLength(1);
    expect(await all("stats")).toMatchObject([{ users: 1 }]);
  });

  test("update and delete triggers", async () => {
    const gus = (await all("user")).find((u) => u.name === "gus")!;
    const updated = (
      await backend.runMutation(
        "auth:updateOne",
        { model: "user", where: [{ field: "_id", value: gus._id }], update: { name: "gustav", image: null } },
        internal,
      )
    ).value as StoredDoc;
    expect(updated.name).toBe("GUSTAV");
    expect((await all("profile"))[0].bio).toBe("gus is now GUSTAV");

    const admin = (await create(user("ivy", { role: "admin" }))).value as StoredDoc;
    await expect(
      backend.runMutation(
        "auth:deleteOne",
        { model: "user", where: [{ field: "_id", value: admin._id }] },
        internal,
      ),
    ).rejects.toThrow("admins cannot be deleted");
    expect((await all("user")).some((u) => u._id === admin._id)).toBe(true);

    const removed = await backend.runMutation(
      "auth:deleteMany",
      { model: "user", where: [{ field: "role", value: null }] },
      internal,
    );
    expect(removed.value).toBe(1);
    expect((await all("user")).map((u) => u.name)).toEqual(["ivy"]);
    expect((await all("profile")).map((p) => p.bio)).toEqual(["hi ivy"]);
  });

  test("nulls from Better Auth clear optional fields", async () => {
    const jo = (await create(user("jo", { banned: true, banReason: "spam", banExpires: now })))
      .value as StoredDoc;
    const unbanned = (
      await backend.runMutation(
        "auth:updateOne",
        {
          model: "user",
          where: [{ field: "_id", value: jo._id }],
          update: { banned: false, banReason: null, banExpires: null },
        },
        internal,
      )
    ).value as StoredDoc;
    expect(unbanned.banned).toBe(false);
    expect("banReason" in unbanned).toBe(false);
    expect("banExpires" in unbanned).toBe(false);
  });

  test("unique email and session token are CONFLICT errors", async () => {
    await create(user("kim"));
    await expect(create({ ...user("kim2"), email: "kim@example.com" })).rejects.toMatchObject({
      code: "CONFLICT",
      status: 409,
    });
    const lou = (await create(user("lou"))).value as StoredDoc;
    await expect(
      backend.runMutation(
        "auth:updateOne",
        { model: "user", where: [{ field: "_id", value: lou._id }], update: { email: "kim@example.com" } },
        internal,
      ),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    // Setting a document's own value again is not a conflict.
    await backend.runMutation(
      "auth:updateOne",
      { model: "user", where: [{ field: "_id", value: lou._id }], update: { email: "lou@example.com" } },
      internal,
    );

    const session = { token: "t1", userId: lou._id, expiresAt: now, createdAt: now, updatedAt: now };
    await create(session, "session");
    await expect(create(session, "session")).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await all("user")).filter((u) => u.email === "kim@example.com")).toHaveLength(1);
  });

  test("per-model argument validation", async () => {
    await expect(create({ ...user("max"), emailVerified: "yes" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENTS",
    });
    // Valid for another model is not enough: a session's data is not a user.
    await expect(
      create({ token: "t9", userId: "x", expiresAt: 1, createdAt: 1, updatedAt: 1 }),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    await expect(create(user("ned"), "stats")).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
  });

  test("a write through the direct adapter in a query is refused before anything happens", async () => {
    await expect(backend.runQuery("probe:directCreateInQuery", {}, internal)).rejects.toMatchObject({
      code: "READ_ONLY",
    });
    await backend.read(async (db) => {
      await expect(
        dbCreate({ db } as any, { schema }, { model: "user", data: user("ola") }),
      ).rejects.toMatchObject({ code: "READ_ONLY" });
    });
    expect((await all("user")).map((u) => u.email)).not.toContain("q@example.com");
  });

  test("direct adapter stores numbers and returns Dates and ids", async () => {
    const { value } = (await backend.runMutation("probe:directRoundTrip", {}, internal)) as any;
    expect(typeof value.created.id).toBe("string");
    expect(value.stored).toMatchObject({ _id: value.created.id, createdAt: now, updatedAt: now });
    expect(value.found.id).toBe(value.created.id);
    expect(value.createdAtIsDate).toBe(true);
    expect(value.found.createdAt.getTime()).toBe(now);
  });
});

describe("schema styles", () => {
  test("the entity style declares the same tables with edges and works as a backend schema", async () => {
    expect(authEntSchema.edges).toEqual(
      expect.arrayContaining([
        { from: "user", name: "sessions", to: "session", cardinality: "many", field: "userId" },
        { from: "user", name: "accounts", to: "account", cardinality: "many", field: "userId" },
        { from: "session", name: "user", to: "user", cardinality: "one", field: "userId" },
        { from: "account", name: "user", to: "user", cardinality: "one", field: "userId" },
      ]),
    );
    expect(authEntSchema.tables.session.indexes.map((i) => i.name).sort()).toEqual(["token", "userId"]);
    const engine = new SqliteEngine({ filename: tempDatabaseFile() });
    const backend = new BackendRuntime({
      schema: authEntSchema,
      modules: { auth: createApi(authEntSchema) },
      engine,
    });
    await backend.start();
    try {
      const u = (await backend.runMutation("auth:create", { model: "user", data: user("pam") }, internal))
        .value as StoredDoc;
      await backend.runMutation(
        "auth:create",
        {
          model: "session",
          data: { token: "s", userId: u._id, expiresAt: now, createdAt: now, updatedAt: now },
        },
        internal,
      );
      const { value, readSet } = await backend.runQuery(
        "auth:findMany",
        { model: "session", where: [{ field: "userId", value: u._id }] },
        internal,
      );
      expect(value).toHaveLength(1);
      expect(readSet.ranges[0].index).toBe("userId");
    } finally {
      await backend.close();
    }
  });
});
