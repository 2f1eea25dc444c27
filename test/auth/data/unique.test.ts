/**
 * Unique fields (`src/auth/data/unique.ts`): a write giving a unique field a value another document
 * has is a `CONFLICT` naming the model and field; a document's own value, and no value at all
 * (missing or Better Auth's null), never conflict.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import type { StoredDoc } from "../../../src/auth/data/types.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: {
      fields: { username: v.optional(v.string()), handle: v.optional(v.union(v.string(), v.null())) },
      indexes: { username: ["username"] },
    },
  }),
});
let backend: BackendRuntime;
const internal = { allowInternal: true };

beforeAll(async () => {
  const api = createApi(schema, { uniqueFields: { user: ["email", "username", "handle"] } });
  backend = new BackendRuntime({
    schema,
    modules: { auth: api },
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
});
afterAll(() => backend.close());

const create = async (name: string, extra: Record<string, unknown> = {}) => {
  const data = { name, email: `${name}@x`, emailVerified: false, createdAt: 1, updatedAt: 1, ...extra };
  return (await backend.runMutation("auth:create", { model: "user", data }, internal)).value as StoredDoc;
};
const update = (id: string, values: Record<string, unknown>) =>
  backend.runMutation(
    "auth:updateOne",
    { model: "user", where: [{ field: "_id", value: id }], update: values },
    internal,
  );

test("documents without a value of a unique field do not conflict with each other", async () => {
  const ann = await create("ann");
  const bob = await create("bob", { username: null });
  expect("username" in ann).toBe(false);
  expect("username" in bob).toBe(false);
  await update(bob._id, { name: "Bob", username: null });
  expect(((await update(ann._id, { name: "Ann" })).value as StoredDoc).name).toBe("Ann");
  // A field that stores null keeps it: two stored nulls are no conflict either.
  const fay = await create("fay", { handle: null });
  const gus = await create("gus", { handle: null });
  expect([fay.handle, gus.handle]).toEqual([null, null]);
});

test("a taken value is a CONFLICT naming the model and the field, on create and on update", async () => {
  const cid = await create("cid", { username: "c" });
  await expect(create("dee", { username: "c" })).rejects.toMatchObject({
    code: "CONFLICT",
    message: "A user with this username already exists",
    data: { model: "user", field: "username" },
  });
  const eve = await create("eve");
  await expect(update(eve._id, { email: "cid@x" })).rejects.toMatchObject({
    code: "CONFLICT",
    message: "A user with this email already exists",
    data: { model: "user", field: "email" },
  });
  // A document's own value again is not a conflict.
  await update(cid._id, { username: "c", email: "cid@x" });
});
