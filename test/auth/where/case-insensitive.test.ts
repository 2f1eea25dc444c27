/**
 * Better Auth 1.7's `Where.mode: "insensitive"` through the data functions (what both adapters
 * call): string comparisons fold case, on an indexed field (`email`) and an unindexed one (`name`)
 * alike, counts agree, ordering comparisons stay case-sensitive, and an unknown mode is a typed error.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import type { StoredDoc } from "../../../src/auth/data/types.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { matchesWhere, type WhereClause } from "../../../src/auth/where/index.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({ ...defineAuthTables() });
const PEOPLE = [
  { name: "Ada Lovelace", email: "Ada@Example.com" },
  { name: "ada byron", email: "ada@example.org" },
  { name: "Grace Hopper", email: "grace@EXAMPLE.com" },
];

let backend: BackendRuntime;
const internal = { allowInternal: true };

beforeAll(async () => {
  backend = new BackendRuntime({
    schema,
    modules: { auth: createApi(schema) },
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
  for (const person of PEOPLE) {
    const data = { ...person, emailVerified: false, createdAt: 1000, updatedAt: 1000 };
    await backend.runMutation("auth:create", { model: "user", data }, internal);
  }
});
afterAll(() => backend.close());

async function emails(where: WhereClause[]): Promise<string[]> {
  const docs = (await backend.runQuery("auth:findMany", { model: "user", where, limit: 100 }, internal))
    .value as StoredDoc[];
  return docs.map((d) => d.email as string).sort();
}

async function count(where: WhereClause[]): Promise<number> {
  return (await backend.runQuery("auth:count", { model: "user", where }, internal)).value as number;
}

const insensitive = (clause: Omit<WhereClause, "mode">): WhereClause[] => [
  { ...clause, mode: "insensitive" },
];

describe("where mode insensitive", () => {
  test("eq on the indexed email matches whatever the stored case; sensitive (the default) does not", async () => {
    expect(await emails(insensitive({ field: "email", value: "ADA@EXAMPLE.COM" }))).toEqual([
      "Ada@Example.com",
    ]);
    expect(await emails([{ field: "email", value: "ADA@EXAMPLE.COM" }])).toEqual([]);
    expect(await emails([{ field: "email", value: "ada@example.com", mode: "sensitive" }])).toEqual([]);
    expect(await count(insensitive({ field: "email", value: "ada@example.com" }))).toBe(1);
  });

  test("ne, in and not_in fold case", async () => {
    expect(await emails(insensitive({ field: "email", operator: "ne", value: "ADA@example.COM" }))).toEqual([
      "ada@example.org",
      "grace@EXAMPLE.com",
    ]);
    const listed = { field: "email", value: ["ada@example.com", "GRACE@example.com"] };
    expect(await emails(insensitive({ ...listed, operator: "in" }))).toEqual([
      "Ada@Example.com",
      "grace@EXAMPLE.com",
    ]);
    expect(await emails(insensitive({ ...listed, operator: "not_in" }))).toEqual(["ada@example.org"]);
    expect(await count(insensitive({ ...listed, operator: "in" }))).toBe(2);
  });

  test("contains, starts_with and ends_with fold case on an unindexed field", async () => {
    expect(await emails(insensitive({ field: "name", operator: "contains", value: "LOVE" }))).toEqual([
      "Ada@Example.com",
    ]);
    expect(await emails(insensitive({ field: "name", operator: "starts_with", value: "ADA" }))).toEqual([
      "Ada@Example.com",
      "ada@example.org",
    ]);
    expect(await emails(insensitive({ field: "email", operator: "ends_with", value: ".COM" }))).toEqual([
      "Ada@Example.com",
      "grace@EXAMPLE.com",
    ]);
    expect(await emails([{ field: "name", operator: "starts_with", value: "ADA" }])).toEqual([]);
  });

  test("an insensitive clause joins the others as any clause does", async () => {
    const where: WhereClause[] = [
      { field: "name", operator: "starts_with", value: "ada", mode: "insensitive" },
      { field: "email", operator: "ends_with", value: ".org" },
    ];
    expect(await emails(where)).toEqual(["ada@example.org"]);
    expect(await emails([...where.slice(0, 1), { ...where[1], connector: "OR" }])).toEqual([
      "Ada@Example.com",
      "ada@example.org",
    ]);
  });

  test("ordering comparisons stay case-sensitive (Better Auth's memory adapter does the same)", async () => {
    const clause: WhereClause = { field: "email", operator: "lt", value: "a", mode: "insensitive" };
    // Upper case sorts before lower case: only the address starting with "A".
    expect(await emails([clause])).toEqual(["Ada@Example.com"]);
    expect(matchesWhere({ email: "ada@example.org" }, [clause])).toBe(false);
  });

  test("an unknown mode is a typed error naming the field", async () => {
    const where = [{ field: "email", value: "x", mode: "loose" }];
    await expect(
      backend.runQuery("auth:findMany", { model: "user", where, limit: 1 }, internal),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENTS", data: { path: "args.where[0].mode" } });
  });
});
