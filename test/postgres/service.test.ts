/** The platform on PostgreSQL: a real service started with a `postgres://` DATABASE_URL, used over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modules, routes } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { getJson, postJson } from "../helpers/http.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

describe.skipIf(!postgresBinDir)("service on PostgreSQL", () => {
  const server = usePostgres();
  let service: TestService;
  let databaseUrl: string;

  beforeAll(async () => {
    databaseUrl = await server().createDatabase();
    service = await startTestService({ schema, modules, routes, databaseUrl });
  });
  afterAll(() => service?.close());

  const call = (kind: "query" | "mutation" | "action", path: string, args: unknown = {}) =>
    postJson(`${service.url}/api/${kind}`, { path, args });

  it("runs on the PostgreSQL engine and reports healthy", async () => {
    expect(service.backend.engine.kind).toBe("postgres");
    const health = await getJson(`${service.url}/healthz`);
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok", commits: "listening" });
  });

  it("commits mutations and serves them to queries, index reads included", async () => {
    const sent = await call("mutation", "messages:send", { body: "hello", author: "pg" });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe("success");
    expect(typeof sent.body.value).toBe("string");
    await call("mutation", "messages:send", { body: "other", author: "someone-else" });
    const mine = await call("query", "messages:byAuthor", { author: "pg" });
    expect(mine.body).toEqual({
      status: "success",
      value: [expect.objectContaining({ _id: sent.body.value, body: "hello", author: "pg" })],
    });
    const route = await getJson(`${service.url}/messages/pg`);
    expect(route.body).toEqual({ count: 1, bodies: ["hello"] });
    // The row is really in PostgreSQL.
    const rows = await server().sql(
      "SELECT doc FROM t_messages WHERE id = $1",
      [sent.body.value],
      databaseUrl,
    );
    expect(JSON.parse(rows[0].doc)).toMatchObject({ body: "hello", author: "pg" });
  });

  it("rolls a failing mutation back completely and answers with its typed error", async () => {
    const failed = await call("mutation", "messages:sendTwoThenThrow", { author: "rollback" });
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ status: "error", code: "BAD_REQUEST" });
    const left = await call("query", "messages:byAuthor", { author: "rollback" });
    expect(left.body.value).toEqual([]);
    const invalid = await call("mutation", "messages:send", { body: 42 });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe("INVALID_ARGUMENTS");
  });

  it("keeps a read-modify-write counter exact under concurrent mutations (serializable retries)", async () => {
    const before = (await call("query", "messages:insertCount")).body.value as number;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call("mutation", "messages:sendCounted", { body: `n${i}` })),
    );
    for (const r of results) expect(r.body.status).toBe("success");
    expect((await call("query", "messages:insertCount")).body.value).toBe(before + 12);
  });

  it("runs internal functions through the backend and stores env values in the database", async () => {
    const purged = await service.backend.runMutation(
      "messages:purge",
      { author: "someone-else" },
      { allowInternal: true },
    );
    expect(purged.value).toBe(1);
    await service.backend.env.set("PG_TEST_VALUE", "stored");
    const rows = await server().sql("SELECT doc FROM t__env", [], databaseUrl);
    expect(rows.map((r) => JSON.parse(r.doc))).toContainEqual(
      expect.objectContaining({ name: "PG_TEST_VALUE", value: "stored" }),
    );
  });
});
