/**
 * The table of auth data operations (`src/auth/data/operations.ts`) and what is derived from it:
 * `createApi` registers one internal function per operation under its wire name, as the query or
 * mutation the operation is, and `operationCalls` reaches each operation by that name.
 */
import { expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import { DATA_OPERATIONS, OPERATION_NAMES, operationCalls } from "../../../src/auth/data/operations.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { defineSchema } from "../../../src/backend/schema.ts";

const schema = defineSchema({ ...defineAuthTables() });

test("the wire names and kinds the HTTP adapter and apps rely on", () => {
  const api = createApi(schema);
  expect(Object.entries(api).map(([name, fn]) => [name, fn.kind, fn.visibility])).toEqual([
    ["create", "mutation", "internal"],
    ["findOne", "query", "internal"],
    ["findMany", "query", "internal"],
    ["count", "query", "internal"],
    ["updateOne", "mutation", "internal"],
    ["updateMany", "mutation", "internal"],
    ["deleteOne", "mutation", "internal"],
    ["deleteMany", "mutation", "internal"],
    ["consumeOne", "mutation", "internal"],
    ["incrementOne", "mutation", "internal"],
  ]);
  expect(OPERATION_NAMES).toEqual(Object.keys(api));
});

test("a custom mutation builder makes the writes, the platform's internal query the reads", () => {
  const built: string[] = [];
  const internalMutation = ((definition: { args?: unknown; handler: unknown }) => {
    built.push(Object.keys(definition.args as object).join(","));
    return { kind: "mutation", visibility: "internal", ...definition };
  }) as any;
  createApi(schema, { internalMutation });
  const writes = OPERATION_NAMES.filter((name) => DATA_OPERATIONS[name].kind === "mutation");
  expect(built).toEqual(writes.map((name) => Object.keys(DATA_OPERATIONS[name].args).join(",")));
  expect(built).toHaveLength(7);
});

test("operationCalls passes each call on with its own name and operation", async () => {
  const seen: unknown[] = [];
  const calls = operationCalls(async (name, operation, args) => {
    seen.push([name, operation === DATA_OPERATIONS[name], args]);
    return name;
  });
  for (const name of OPERATION_NAMES) {
    expect(await calls[name]({ model: `m-${name}` } as never)).toBe(name);
  }
  expect(seen).toEqual(OPERATION_NAMES.map((name) => [name, true, { model: `m-${name}` }]));
});
