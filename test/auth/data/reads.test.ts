/**
 * The auth data layer's reads (`src/auth/data/find.ts`, `count.ts`) and what every operation
 * shares (`documents.ts`, `models.ts`): which models the functions may touch and the refusal for
 * any other, the unique fields each model gets by default, how a selection projects a document,
 * and how Better Auth's `null` and `undefined` become stored values. On real SQLite.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { dbCreate } from "../../../src/auth/data/create.ts";
import { dbFindMany, dbFindOne } from "../../../src/auth/data/find.ts";
import { createApi } from "../../../src/auth/data/functions.ts";
import { shapeOf } from "../../../src/auth/data/models.ts";
import type { DataConfig, StoredDoc } from "../../../src/auth/data/types.ts";
import { dbUpdateOne } from "../../../src/auth/data/update.ts";
import { defineAuthTables, markAuthTable } from "../../../src/auth/schema/auth-schema.ts";
import { functionsFor } from "../../../src/backend/functions/define.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../../src/backend/schema.ts";
import type { MutationCtx } from "../../../src/backend/server.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: {
      fields: {
        username: v.optional(v.string()),
        anything: v.optional(v.any()),
        nothing: v.optional(v.null()),
      },
    },
  }),
  // Marked as an auth table under a name requirements §2 does not use, with its own unique field.
  profile: markAuthTable(defineTable({ handle: v.string(), bio: v.optional(v.string()) }), {
    model: "profile",
    unique: ["handle"],
  }),
  stats: defineTable({ users: v.number() }),
});

/** Tables named like requirements §2's but declared with plain `defineTable`: auth models by their name. */
const plainSchema = defineSchema({
  user: defineTable({ name: v.string(), email: v.string() }),
  account: defineTable({ accountId: v.string() }),
  stats: defineTable({ users: v.number() }),
});

const internal = { allowInternal: true };
const backends: BackendRuntime[] = [];
async function start(
  s: typeof schema | typeof plainSchema,
  modules: Record<string, Record<string, unknown>>,
) {
  const backend = new BackendRuntime({
    schema: s,
    modules,
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
  backends.push(backend);
  return backend;
}
afterAll(async () => {
  for (const b of backends) await b.close();
});

/** What a test runs inside a mutation or a query of `backend` (the data layer called directly). */
let body: (ctx: MutationCtx<any>) => Promise<unknown> = async () => null;
const { internalMutation, internalQuery } = functionsFor(schema);
const direct = {
  write: internalMutation({ args: {}, handler: (ctx) => body(ctx as MutationCtx<any>) }),
  read: internalQuery({ args: {}, handler: (ctx) => body(ctx as MutationCtx<any>) }),
};

let backend: BackendRuntime;
beforeAll(async () => {
  backend = await start(schema, {
    auth: createApi(schema),
    // Without the argument validators: the data layer's own checks of the model and the data.
    raw: createApi(schema, { skipValidation: true }),
    only: createApi(schema, { skipValidation: true, models: ["profile", "stats"], uniqueFields: {} }),
    direct,
  });
});

const config: DataConfig = { schema };
let serial = 0;
const userData = (extra: Record<string, unknown> = {}) => {
  const name = `r${++serial}`;
  return { name, email: `${name}@x`, emailVerified: false, createdAt: 1, updatedAt: 1, ...extra };
};
const call = async (kind: "query" | "mutation", fn: string, args: Record<string, unknown>) =>
  (kind === "query"
    ? await backend.runQuery(fn, args, internal)
    : await backend.runMutation(fn, args, internal)
  ).value;
const create = async (extra: Record<string, unknown> = {}) =>
  (await call("mutation", "auth:create", { model: "user", data: userData(extra) })) as StoredDoc;
const inMutation = async <T>(fn: (ctx: MutationCtx<any>) => Promise<T>): Promise<T> => {
  body = fn;
  return (await backend.runMutation("direct:write", {}, internal)).value as T;
};

describe("findOne / findMany", () => {
  test("answer only the selected fields the document has; all of them without a selection", async () => {
    const doc = await create({ username: "sel1" });
    const where = [{ field: "_id", value: doc._id }];
    expect(
      await call("query", "auth:findOne", { model: "user", where, select: ["username", "email"] }),
    ).toEqual({ username: "sel1", email: doc.email });
    expect(await call("query", "auth:findMany", { model: "user", where, select: ["username"] })).toEqual([
      { username: "sel1" },
    ]);
    expect(await call("query", "auth:findMany", { model: "user", where, select: [] })).toEqual([doc]);
    expect(await call("query", "auth:findOne", { model: "user", where })).toEqual(doc);
    // A selected field the document lacks is no key at all (not a key holding undefined).
    const keys = await inMutation(async (ctx) => {
      const one = await dbFindOne(ctx, config, { model: "user", where, select: ["username", "image"] });
      const many = await dbFindMany(ctx, config, { model: "user", where, select: ["image", "name"] });
      return [Object.keys(one ?? {}), many.map((d) => Object.keys(d))];
    });
    expect(keys).toEqual([["username"], [["name"]]]);
  });

  test("findOne answers null when nothing matches", async () => {
    const where = [{ field: "username", value: "nobody" }];
    expect(await call("query", "auth:findOne", { model: "user", where, select: ["name"] })).toBeNull();
  });
});

describe("which models the functions may touch", () => {
  test("a table the schema has but did not declare as an auth table is refused, naming it", async () => {
    for (const fn of ["findOne", "findMany", "count"]) {
      await expect(
        call("query", `raw:${fn}`, { model: "stats", where: [{ field: "users", value: 1 }] }),
      ).rejects.toMatchObject({
        code: "BAD_REQUEST",
        message: `Unknown auth model "stats": the schema's "stats" table was not made by defineAuthTables / defineAuthEnts (or marked with markAuthTable). Declare the auth tables with defineAuthTables(authOptions) using the same plugins and options as betterAuth, or write them with \`npm run cli -- auth generate\`.`,
        data: { model: "stats" },
      });
    }
  });

  test("a model the schema has no table for is refused, its name cut to 64 characters", async () => {
    const long = "m".repeat(100);
    await expect(call("query", "raw:findMany", { model: long })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(
        new RegExp(`^Unknown auth model "${"m".repeat(64)}": the schema has no "m{64}" table\\.`),
      ),
      data: { model: "m".repeat(64) },
    });
  });

  test("a model that is not a string is no table, even one that names a table as text", () => {
    // The function arguments always give a string; a direct caller might not. `tables[["user"]]`
    // would be the user table.
    expect(() => shapeOf(config, ["user"])).toThrow(
      /^Unknown auth model "user": the schema has no "user" table\./,
    );
    expect(() => shapeOf(config, 1)).toThrow(/^Unknown auth model "1": the schema has no "1" table\./);
    expect(shapeOf(config, "user")).toBe(schema.tables.user);
  });

  test("a marked table under its own name is an auth model; `models` overrides the default list", async () => {
    const doc = (await call("mutation", "raw:create", {
      model: "profile",
      data: { handle: "h1" },
    })) as StoredDoc;
    expect(doc.handle).toBe("h1");
    // Only what `models` names, even a table the default would refuse.
    await call("mutation", "only:create", { model: "stats", data: { users: 3 } });
    expect(await call("query", "only:count", { model: "stats" })).toBe(1);
    expect(await call("query", "only:count", { model: "profile" })).toBe(1);
    await expect(call("query", "only:count", { model: "user" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/^Unknown auth model "user": the schema's "user" table was not made/),
    });
  });

  test("tables named like requirements §2's are auth models even without defineAuthTables", async () => {
    const plain = await start(plainSchema, { auth: createApi(plainSchema, { skipValidation: true }) });
    const run = async (fn: string, args: Record<string, unknown>) =>
      (await plain.runMutation(`auth:${fn}`, args, internal)).value;
    await run("create", { model: "user", data: { name: "p", email: "p@x" } });
    // Their unique fields are the requirements' defaults: user.email; account none.
    await expect(run("create", { model: "user", data: { name: "q", email: "p@x" } })).rejects.toMatchObject({
      code: "CONFLICT",
      data: { model: "user", field: "email" },
    });
    await run("create", { model: "account", data: { accountId: "a" } });
    await run("create", { model: "account", data: { accountId: "a" } });
    expect((await plain.runQuery("auth:count", { model: "account" }, internal)).value).toBe(2);
    await expect(run("create", { model: "stats", data: { users: 1 } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      data: { model: "stats" },
    });
  });
});

describe("unique fields by default", () => {
  test("a marked table's own unique fields, and defineAuthTables' user.email", async () => {
    await call("mutation", "auth:create", { model: "profile", data: { handle: "taken" } });
    await expect(
      call("mutation", "auth:create", { model: "profile", data: { handle: "taken" } }),
    ).rejects.toMatchObject({ code: "CONFLICT", data: { model: "profile", field: "handle" } });
    const doc = await create();
    await expect(create({ email: doc.email })).rejects.toMatchObject({
      code: "CONFLICT",
      data: { model: "user", field: "email" },
    });
    // `uniqueFields: {}` names none for any model.
    await call("mutation", "only:create", { model: "profile", data: { handle: "taken" } });
  });
});

describe("null and undefined from Better Auth", () => {
  /** The keys a beforeCreate trigger was given. */
  let keys: string[] = [];

  test("null is stored in a field that can hold it: v.any() and v.null() alike", async () => {
    const doc = await create({ anything: null, nothing: null, username: null });
    expect(doc.anything).toBeNull();
    expect(doc.nothing).toBeNull();
    expect("username" in doc).toBe(false);
  });

  test("undefined in create data is no key; in an update it removes the field", async () => {
    const doc = await create({ username: "undef", anything: 1 });
    const seen = await inMutation(async (ctx) => {
      const made = await dbCreate(
        ctx,
        { ...config, triggers: { user: { beforeCreate: (_, d) => void (keys = Object.keys(d)) } } },
        {
          model: "user",
          data: userData({ username: undefined }),
        },
      );
      const updated = await dbUpdateOne(ctx, config, {
        model: "user",
        where: [{ field: "_id", value: doc._id }],
        update: { username: undefined, anything: 2 },
      });
      return { made: "username" in made, updated };
    });
    expect(keys).not.toContain("username");
    expect(seen.made).toBe(false);
    expect(seen.updated).toEqual({
      ...Object.fromEntries(Object.entries(doc).filter(([k]) => k !== "username")),
      anything: 2,
    });
  });

  test("the database's own fields in data or an update are dropped, not written", async () => {
    const doc = (await call("mutation", "raw:create", {
      model: "user",
      data: userData({ _id: "mine", _creationTime: 5 }),
    })) as StoredDoc;
    expect(doc._id).not.toBe("mine");
    expect(doc._creationTime).not.toBe(5);
    const updated = (await call("mutation", "raw:updateOne", {
      model: "user",
      where: [{ field: "_id", value: doc._id }],
      update: { _id: "other", _creationTime: 6, name: "kept" },
    })) as StoredDoc;
    expect(updated).toEqual({ ...doc, name: "kept" });
  });
});
