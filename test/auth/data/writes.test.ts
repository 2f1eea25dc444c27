/**
 * The auth data layer's writes (`src/auth/data/create.ts`, `update.ts`, `delete.ts`) through the
 * data functions on real SQLite: each trigger runs at its point (before the write, seeing the
 * document as it was; after it, seeing it as it is), a value returned by a before-trigger replaces
 * the data (and is checked for uniqueness), anything else than an object or nothing is a
 * `BAD_REQUEST`, and the answers are the written document, null or a count.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { dbCreate } from "../../../src/auth/data/create.ts";
import { dbDeleteMany, dbDeleteOne } from "../../../src/auth/data/delete.ts";
import { createApi } from "../../../src/auth/data/functions.ts";
import type { DataConfig, ModelTriggers, StoredDoc } from "../../../src/auth/data/types.ts";
import { dbUpdateMany, dbUpdateOne } from "../../../src/auth/data/update.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { functionsFor } from "../../../src/backend/functions/define.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import type { MutationCtx } from "../../../src/backend/server.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: {
      fields: { username: v.optional(v.string()), note: v.optional(v.union(v.string(), v.null())) },
      indexes: { username: ["username"] },
    },
  }),
});

/** The user triggers of the running test (set per test; the functions read them at each call). */
let hooks: ModelTriggers<StoredDoc, MutationCtx<any>> = {};
/** What the triggers saw, in order. */
let seen: unknown[] = [];
const triggers = {
  user: {
    beforeCreate: (ctx: MutationCtx<any>, data: any) => hooks.beforeCreate?.(ctx, data),
    onCreate: (ctx: MutationCtx<any>, doc: any) => hooks.onCreate?.(ctx, doc),
    beforeUpdate: (ctx: MutationCtx<any>, doc: any, update: any) => hooks.beforeUpdate?.(ctx, doc, update),
    onUpdate: (ctx: MutationCtx<any>, next: any, old: any) => hooks.onUpdate?.(ctx, next, old),
    beforeDelete: (ctx: MutationCtx<any>, doc: any) => hooks.beforeDelete?.(ctx, doc),
    onDelete: (ctx: MutationCtx<any>, doc: any) => hooks.onDelete?.(ctx, doc),
  },
};

let backend: BackendRuntime;
const internal = { allowInternal: true };

/** Each write function called from a query, whose ctx cannot write (Better Auth's adapter in a query). */
const config: DataConfig = { schema };
const { internalQuery } = functionsFor(schema);
const inQuery = {
  create: internalQuery({ args: {}, handler: (ctx) => dbCreate(ctx, config, { model: "user", data: {} }) }),
  updateOne: internalQuery({
    args: {},
    handler: (ctx) => dbUpdateOne(ctx, config, { model: "user", where: [], update: {} }),
  }),
  updateMany: internalQuery({
    args: {},
    handler: (ctx) => dbUpdateMany(ctx, config, { model: "user", where: [], update: {} }),
  }),
  deleteOne: internalQuery({
    args: {},
    handler: (ctx) => dbDeleteOne(ctx, config, { model: "user", where: [] }),
  }),
  deleteMany: internalQuery({
    args: {},
    handler: (ctx) => dbDeleteMany(ctx, config, { model: "user", where: [] }),
  }),
};

beforeAll(async () => {
  const uniqueFields = { user: ["email", "username"] };
  backend = new BackendRuntime({
    schema,
    modules: {
      auth: createApi(schema, { triggers, uniqueFields }),
      // Without the argument validators: what the write functions do with malformed data themselves.
      raw: createApi(schema, { uniqueFields, skipValidation: true }),
      inQuery,
    },
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
});
afterAll(() => backend?.close());
beforeEach(() => {
  hooks = {};
  seen = [];
});

let serial = 0;
const userData = (extra: Record<string, unknown> = {}) => {
  const name = `u${++serial}`;
  return { name, email: `${name}@x`, emailVerified: false, createdAt: 1, updatedAt: 1, ...extra };
};
const run = async (fn: string, args: Record<string, unknown>, module = "auth") =>
  (await backend.runMutation(`${module}:${fn}`, { model: "user", ...args }, internal)).value;
const create = async (extra: Record<string, unknown> = {}, select?: string[]) =>
  (await run("create", { data: userData(extra), ...(select ? { select } : {}) })) as StoredDoc;
const byId = (id: string) => [{ field: "_id", value: id }];
const stored = (id: string) => backend.read((db) => db.get("user", id)) as Promise<StoredDoc | null>;

describe("create", () => {
  it("inserts and answers the stored document, with the database's _id and _creationTime", async () => {
    const doc = await create({ username: "ann" });
    expect(doc).toMatchObject({ username: "ann", emailVerified: false });
    expect(typeof doc._id).toBe("string");
    expect(typeof doc._creationTime).toBe("number");
    expect(await stored(doc._id)).toEqual(doc);
  });

  it("gives beforeCreate no key for a null it dropped", async () => {
    hooks = { beforeCreate: (_, data) => void seen.push(Object.keys(data).includes("username")) };
    await create({ username: null });
    expect(seen).toEqual([false]);
  });

  it("answers only the selected fields", async () => {
    const doc = await create({ username: "sel" }, ["username", "email"]);
    expect(Object.keys(doc).sort()).toEqual(["email", "username"]);
  });

  it("drops null for a field that cannot hold it, keeps it for one that can", async () => {
    const doc = await create({ username: null, note: null });
    expect("username" in doc).toBe(false);
    expect(doc.note).toBeNull();
  });

  it("runs beforeCreate with the data and onCreate with the stored document, in the mutation", async () => {
    hooks = {
      beforeCreate: (_, data) => {
        seen.push(["before", data.username]);
      },
      onCreate: async (ctx, doc) => {
        seen.push(["on", doc.username, (await ctx.db.get("user", doc._id))?.username]);
      },
    };
    const doc = await create({ username: "trig" });
    expect(seen).toEqual([
      ["before", "trig"],
      ["on", "trig", "trig"],
    ]);
    expect(doc.username).toBe("trig");
  });

  it("stores what beforeCreate returns instead, nulls dropped, and checks it for uniqueness", async () => {
    hooks = { beforeCreate: (_, data) => ({ ...data, username: "replaced", note: null, _id: "mine" }) };
    const doc = await create({ username: "original" });
    expect(doc.username).toBe("replaced");
    expect(doc.note).toBeNull();
    expect(doc._id).not.toBe("mine");
    hooks = { beforeCreate: (_, data) => ({ ...data, username: "replaced" }) };
    await expect(create({ username: "other" })).rejects.toMatchObject({
      code: "CONFLICT",
      data: { model: "user", field: "username" },
    });
    hooks = { beforeCreate: (_, data) => ({ ...data, username: null }) };
    expect("username" in (await create({ username: "dropped" }))).toBe(false);
  });

  it.each([null, undefined])("keeps the data when beforeCreate returns %s", async (value) => {
    hooks = { beforeCreate: () => value };
    expect((await create({ username: `kept-${value}` })).username).toBe(`kept-${value}`);
  });

  it.each([
    ["a string", "x"],
    ["an array", [1]],
    ["true", true],
  ])("refuses a beforeCreate that returns %s, and writes nothing", async (_, value) => {
    let onCreate = 0;
    hooks = { beforeCreate: () => value, onCreate: () => void onCreate++ };
    const before = (await backend.read((db) => db.query("user").collect())).length;
    await expect(create()).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: 'beforeCreate of "user" must return an object or nothing',
    });
    expect(onCreate).toBe(0);
    expect((await backend.read((db) => db.query("user").collect())).length).toBe(before);
  });

  it("refuses data that is not an object (without argument validation)", async () => {
    for (const data of ["text", null, [1]]) {
      await expect(run("create", { data }, "raw")).rejects.toMatchObject({
        code: "BAD_REQUEST",
        message: "create: data must be an object",
      });
    }
  });
});

describe("update", () => {
  it("updateOne patches the first match and answers it updated; no match answers null", async () => {
    const doc = await create({ username: "up1" });
    const updated = (await run("updateOne", {
      where: byId(doc._id),
      update: { name: "Renamed" },
    })) as StoredDoc;
    expect(updated).toEqual({ ...doc, name: "Renamed" });
    expect(await stored(doc._id)).toEqual(updated);
    expect(
      await run("updateOne", { where: [{ field: "username", value: "nobody" }], update: { name: "x" } }),
    ).toBe(null);
  });

  it("a null for a field that cannot hold it removes the field; one that can stores null", async () => {
    const doc = await create({ username: "clear", note: "n" });
    const updated = (await run("updateOne", {
      where: byId(doc._id),
      update: { username: null, note: null },
    })) as StoredDoc;
    expect("username" in updated).toBe(false);
    expect(updated.note).toBeNull();
  });

  it("runs beforeUpdate with the old document and the patch, onUpdate with the new and the old", async () => {
    const doc = await create({ username: "tu" });
    hooks = {
      beforeUpdate: async (ctx, old, patch) => {
        seen.push(["before", old.name, patch, (await ctx.db.get("user", old._id))?.name]);
      },
      onUpdate: async (ctx, next, old) => {
        seen.push(["on", next.name, old.name, (await ctx.db.get("user", next._id))?.name]);
      },
    };
    await run("updateOne", { where: byId(doc._id), update: { name: "New" } });
    expect(seen).toEqual([
      ["before", doc.name, { name: "New" }, doc.name],
      ["on", "New", doc.name, "New"],
    ]);
  });

  it("applies what beforeUpdate returns instead, nulls removing fields, and checks it for uniqueness", async () => {
    await create({ username: "taken" });
    const doc = await create({ username: "mine", note: "n" });
    hooks = { beforeUpdate: () => ({ name: "From trigger", username: null }) };
    const updated = (await run("updateOne", {
      where: byId(doc._id),
      update: { name: "ignored" },
    })) as StoredDoc;
    expect(updated.name).toBe("From trigger");
    expect("username" in updated).toBe(false);
    hooks = { beforeUpdate: () => ({ username: "taken" }) };
    await expect(run("updateOne", { where: byId(doc._id), update: { name: "y" } })).rejects.toMatchObject({
      code: "CONFLICT",
      data: { field: "username" },
    });
  });

  it("a document's own unique value is no conflict", async () => {
    const doc = await create({ username: "own" });
    const updated = (await run("updateOne", {
      where: byId(doc._id),
      update: { username: "own", email: doc.email },
    })) as StoredDoc;
    expect(updated.username).toBe("own");
  });

  it.each([null, undefined])("keeps the patch when beforeUpdate returns %s", async (value) => {
    const doc = await create();
    hooks = { beforeUpdate: () => value };
    expect(
      ((await run("updateOne", { where: byId(doc._id), update: { name: "P" } })) as StoredDoc).name,
    ).toBe("P");
  });

  it.each([
    ["a string", "x"],
    ["an array", [1]],
  ])("refuses a beforeUpdate that returns %s, and changes nothing", async (_, value) => {
    const doc = await create();
    let onUpdate = 0;
    hooks = { beforeUpdate: () => value, onUpdate: () => void onUpdate++ };
    await expect(run("updateOne", { where: byId(doc._id), update: { name: "Z" } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: 'beforeUpdate of "user" must return an object or nothing',
    });
    expect(onUpdate).toBe(0);
    expect(await stored(doc._id)).toEqual(doc);
  });

  it("refuses an update that is not an object (without argument validation)", async () => {
    const doc = await create();
    for (const fn of ["updateOne", "updateMany"]) {
      for (const update of ["text", null, [1]]) {
        await expect(run(fn, { where: byId(doc._id), update }, "raw")).rejects.toMatchObject({
          code: "BAD_REQUEST",
          message: "update must be an object",
        });
      }
    }
  });

  it("updateMany patches every match, each through the triggers, and answers how many", async () => {
    const note = `many-${serial}`;
    const docs = [await create({ note }), await create({ note }), await create({ note: "other" })];
    hooks = { onUpdate: (_, next) => void seen.push(next._id) };
    const where = [{ field: "note", value: note }];
    expect(await run("updateMany", { where, update: { name: "Same" } })).toBe(2);
    expect(new Set(seen)).toEqual(new Set([docs[0]._id, docs[1]._id]));
    expect((await stored(docs[0]._id))?.name).toBe("Same");
    expect((await stored(docs[1]._id))?.name).toBe("Same");
    expect((await stored(docs[2]._id))?.name).toBe(docs[2].name);
    expect(
      await run("updateMany", { where: [{ field: "note", value: "none" }], update: { name: "N" } }),
    ).toBe(0);
  });
});

describe("delete", () => {
  it("deleteOne deletes the match and answers null; nothing matching is no error", async () => {
    const doc = await create();
    expect(await run("deleteOne", { where: byId(doc._id) })).toBeNull();
    expect(await stored(doc._id)).toBeNull();
    expect(await run("deleteOne", { where: byId(doc._id) })).toBeNull();
  });

  it("deleteOne deletes only the first of several matches", async () => {
    const note = `one-of-${serial}`;
    await create({ note });
    await create({ note });
    await run("deleteOne", { where: [{ field: "note", value: note }] });
    const left = await backend.read((db) => db.query("user").collect());
    expect(left.filter((d) => d.note === note)).toHaveLength(1);
  });

  it("runs beforeDelete while the document exists and onDelete after it is gone", async () => {
    const doc = await create();
    hooks = {
      beforeDelete: async (ctx, d) =>
        void seen.push(["before", d._id, (await ctx.db.get("user", d._id)) !== null]),
      onDelete: async (ctx, d) => void seen.push(["on", d._id, (await ctx.db.get("user", d._id)) !== null]),
    };
    await run("deleteOne", { where: byId(doc._id) });
    expect(seen).toEqual([
      ["before", doc._id, true],
      ["on", doc._id, false],
    ]);
  });

  it("a throwing beforeDelete keeps the document", async () => {
    const doc = await create();
    hooks = {
      beforeDelete: () => {
        throw new Error("kept");
      },
    };
    await expect(run("deleteOne", { where: byId(doc._id) })).rejects.toThrow("kept");
    await expect(run("deleteMany", { where: byId(doc._id) })).rejects.toThrow("kept");
    expect(await stored(doc._id)).toEqual(doc);
  });

  it("deleteMany deletes every match, each through the triggers, and answers how many", async () => {
    const note = `del-${serial}`;
    const docs = [await create({ note }), await create({ note }), await create({ note: "keep" })];
    hooks = { onDelete: (_, d) => void seen.push(d._id) };
    expect(await run("deleteMany", { where: [{ field: "note", value: note }] })).toBe(2);
    expect(new Set(seen)).toEqual(new Set([docs[0]._id, docs[1]._id]));
    expect(await stored(docs[0]._id)).toBeNull();
    expect(await stored(docs[1]._id)).toBeNull();
    expect(await stored(docs[2]._id)).toEqual(docs[2]);
    expect(await run("deleteMany", { where: [{ field: "note", value: note }] })).toBe(0);
  });
});

describe("without triggers or in a query", () => {
  it("creates, updates and deletes for a model without triggers", async () => {
    const doc = (await run("create", { data: userData({ note: "plain" }) }, "raw")) as StoredDoc;
    expect(doc.note).toBe("plain");
    const updated = (await run(
      "updateOne",
      { where: byId(doc._id), update: { name: "Q" } },
      "raw",
    )) as StoredDoc;
    expect(updated.name).toBe("Q");
    expect(await run("updateMany", { where: byId(doc._id), update: { name: "R" } }, "raw")).toBe(1);
    expect(await run("deleteOne", { where: byId(doc._id) }, "raw")).toBeNull();
    expect(await stored(doc._id)).toBeNull();
    const other = (await run("create", { data: userData() }, "raw")) as StoredDoc;
    expect(await run("deleteMany", { where: byId(other._id) }, "raw")).toBe(1);
  });

  it.each([
    ["create", "create"],
    ["updateOne", "update"],
    ["updateMany", "update"],
    ["deleteOne", "delete"],
    ["deleteMany", "delete"],
  ])("%s in a query is READ_ONLY, naming what was tried", async (fn, action) => {
    await expect(backend.runQuery(`inQuery:${fn}`, {}, internal)).rejects.toMatchObject({
      code: "READ_ONLY",
      message: expect.stringMatching(new RegExp(`^Better Auth tried to ${action} "user" in a query`)),
    });
  });
});
