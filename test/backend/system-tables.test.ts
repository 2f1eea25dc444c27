/**
 * `_env` holds the signing secret and private keys: application functions must not reach it,
 * neither by name nor by an id smuggled in as an argument.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { functionsFor } from "../../src/backend/functions/define.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema, defineTable } from "../../src/backend/schema.ts";
import { v } from "../../src/backend/values/validators.ts";
import { startTestBackend } from "../helpers/service.ts";

const schema = defineSchema({ notes: defineTable({ body: v.string() }) });
const { query, mutation } = functionsFor(schema);
const probe = {
  listEnv: query({ args: {}, handler: (ctx) => (ctx.db as any).query("_env").collect() }),
  getAny: query({ args: { id: v.string() }, handler: (ctx, { id }) => ctx.db.get(id) }),
  writeEnv: mutation({
    args: {},
    handler: (ctx) => (ctx.db as any).insert("_env", { name: "X", value: "y" }),
  }),
  deleteNote: mutation({ args: { id: v.id("notes") }, handler: (ctx, { id }) => ctx.db.delete(id) }),
};

let backend: BackendRuntime;
let envId: string;

beforeAll(async () => {
  backend = await startTestBackend({ schema, modules: { probe } });
  await backend.env.set("SERVICE_AUTH_SECRET", "s3cret-s3cret-s3cret-s3cret-s3cret");
  envId = (await backend.read((db) => db.query("_env").first()))!._id;
});
afterAll(async () => {
  await backend.close();
});

describe("system tables", () => {
  it("cannot be queried or written by name from a function", async () => {
    await expect(backend.runQuery("probe:listEnv", {})).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(backend.runMutation("probe:writeEnv", {})).rejects.toMatchObject({ code: "BAD_REQUEST" });
    expect(backend.env.get("X")).toBeUndefined();
  });

  it("look absent when a function is handed one of their ids", async () => {
    expect((await backend.runQuery("probe:getAny", { id: envId })).value).toBeNull();
  });

  it("an id of another table is refused by v.id before the handler runs", async () => {
    await expect(backend.runMutation("probe:deleteNote", { id: envId })).rejects.toMatchObject({
      code: "INVALID_ARGUMENTS",
    });
    expect(await backend.read((db) => db.get(envId))).not.toBeNull();
  });
});
