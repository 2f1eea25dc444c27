/**
 * The in-memory matcher and sorter order values exactly as the index keys do, so a where gives
 * the same answer whether an index range or the filter decides it (issue 8 item 6).
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import type { StoredDoc } from "../../../src/auth/data/types.ts";
import { defineAuthTables } from "../../../src/auth/schema/auth-schema.ts";
import { matchesWhere, type WhereClause } from "../../../src/auth/where/index.ts";
import { BackendRuntime } from "../../../src/backend/runtime.ts";
import { defineSchema } from "../../../src/backend/schema.ts";
import { SqliteEngine } from "../../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({
  ...defineAuthTables({
    user: {
      fields: { nick: v.optional(v.string()), alias: v.optional(v.string()) },
      // `nick` is indexed, `alias` (always equal to it) is not: the same where on each takes
      // the index path and the filter path.
      indexes: { nick: ["nick"] },
    },
  }),
});

/** U+E000 sorts after the surrogate pair of U+1F600 in UTF-16 but before it by code point. */
const NAMES = ["a", "\uE000", "😀", "\uFFFF", "𝄞", "é"];

let backend: BackendRuntime;
let all: StoredDoc[] = [];
const internal = { allowInternal: true };

beforeAll(async () => {
  backend = new BackendRuntime({
    schema,
    modules: { auth: createApi(schema) },
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
  for (const [i, name] of NAMES.entries()) {
    const data = {
      name,
      nick: name,
      alias: name,
      email: `u${i}@example.com`,
      emailVerified: false,
      createdAt: 1000,
      updatedAt: 1000,
    };
    await backend.runMutation("auth:create", { model: "user", data }, internal);
  }
  all = (await backend.runQuery("auth:findMany", { model: "user", limit: 100 }, internal))
    .value as StoredDoc[];
});
afterAll(() => backend.close());

async function findNames(where: WhereClause[], sortBy?: { field: string; direction: "asc" | "desc" }) {
  const docs = (
    await backend.runQuery("auth:findMany", { model: "user", where, sortBy, limit: 100 }, internal)
  ).value as StoredDoc[];
  return docs.map((d) => d.name as string);
}

describe("one value order for index reads and the in-memory matcher", () => {
  test('`lt "😀"` keeps the same documents on the index path and the filter path', async () => {
    const indexed = await findNames([{ field: "nick", operator: "lt", value: "😀" }]);
    const filtered = await findNames([{ field: "alias", operator: "lt", value: "😀" }]);
    const inMemory = all.filter((d) => matchesWhere(d, [{ field: "nick", operator: "lt", value: "😀" }]));
    expect(new Set(filtered)).toEqual(new Set(indexed));
    expect(new Set(inMemory.map((d) => d.name))).toEqual(new Set(indexed));
  });

  test("every comparison operator agrees between both paths for every stored value", async () => {
    for (const operator of ["lt", "lte", "gt", "gte"] as const) {
      for (const value of NAMES) {
        const indexed = await findNames([{ field: "nick", operator, value }]);
        const filtered = await findNames([{ field: "alias", operator, value }]);
        const inMemory = all
          .filter((d) => matchesWhere(d, [{ field: "nick", operator, value }]))
          .map((d) => d.name);
        expect(new Set(filtered), `${operator} ${JSON.stringify(value)}`).toEqual(new Set(indexed));
        expect(new Set(inMemory), `${operator} ${JSON.stringify(value)}`).toEqual(new Set(indexed));
      }
    }
  });

  test("sorting in memory gives the index order", async () => {
    for (const direction of ["asc", "desc"] as const) {
      const byIndex = await findNames([], { field: "nick", direction });
      // Two OR branches on different indexes are merged and then sorted in memory.
      const merged = await findNames(
        [
          { field: "nick", operator: "gte", value: "" },
          { field: "email", operator: "eq", value: "nobody@example.com", connector: "OR" },
        ],
        { field: "alias", direction },
      );
      expect(byIndex).toHaveLength(NAMES.length);
      expect(merged).toEqual(byIndex);
    }
  });
});
