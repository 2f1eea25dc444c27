import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modules, routes } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { callFunction } from "../helpers/http.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ schema, modules, routes });
});
afterAll(() => service.close());

const call = (kind: "query" | "mutation" | "action", path: string, args: unknown = {}) =>
  callFunction(service.url, kind, path, args);
const byAuthor = async (author: string) =>
  ((await call("query", "messages:byAuthor", { author })).body.value as { body: string }[]).map(
    (m) => m.body,
  );

describe("functions", () => {
  it("validates arguments: 400 INVALID_ARGUMENTS naming the path", async () => {
    const cases: [unknown, string][] = [
      [{}, "args.body"],
      [{ body: 1 }, "args.body"],
      [{ body: "x", author: null }, "args.author"],
      [{ body: "x", extra: 1 }, "args.extra"],
    ];
    for (const [args, path] of cases) {
      const r = await call("mutation", "messages:send", args);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ status: "error", code: "INVALID_ARGUMENTS", data: { path } });
      expect(r.body.message).toContain(path);
    }
    for (const args of [[], "x", 5]) {
      const r = await call("mutation", "messages:send", args);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("INVALID_ARGUMENTS");
    }
    expect(await byAuthor("anonymous")).toEqual([]);
  });

  it("a mutation is atomic: a throw after two inserts leaves nothing", async () => {
    const r = await call("mutation", "messages:sendTwoThenThrow", { author: "atomic" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ status: "error", code: "BAD_REQUEST", message: "changed my mind" });
    expect(await byAuthor("atomic")).toEqual([]);
  });

  it("actions call queries, mutations and other actions", async () => {
    const r = await call("action", "actions:sendAndCount", { body: "from action" });
    expect(r.status).toBe(200);
    expect(r.body.value).toMatchObject({ mine: ["from action"], total: expect.any(Number) });
    expect(r.body.value.id).toMatch(/^[a-z2-7]{30}$/);
    expect(r.body.value.total).toBeGreaterThanOrEqual(1);
    expect(await byAuthor("action")).toEqual(["from action"]);
  });

  it("internal functions are not callable over HTTP but are callable inside the server", async () => {
    for (const [kind, path, args] of [
      ["query", "messages:secretCount", {}],
      ["mutation", "messages:purge", { author: "x" }],
      ["action", "tasks:total", {}],
      ["query", "messages:greet", { name: "a" }],
    ] as const) {
      const r = await call(kind, path, args);
      expect(r.status, path).toBe(404);
      expect(r.body.code).toBe("FUNCTION_NOT_FOUND");
    }
    const backend = service.backend;
    await expect(backend.runQuery("messages:secretCount", {})).rejects.toMatchObject({
      code: "FUNCTION_NOT_FOUND",
    });
    const { value } = await backend.runQuery("messages:greet", { name: "cli" }, { allowInternal: true });
    expect(value).toBe("hello cli");
  });

  it("a function called with the wrong kind is not found", async () => {
    const r = await call("query", "messages:send", { body: "x" });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("FUNCTION_NOT_FOUND");
    expect(await byAuthor("anonymous")).toEqual([]);
  });

  it("customMutation wraps handlers inside the same transaction", async () => {
    const count = async () => (await call("query", "messages:insertCount")).body.value as number;
    expect(await count()).toBe(0);
    expect((await call("mutation", "messages:sendCounted", { body: "one" })).status).toBe(200);
    expect((await call("mutation", "messages:sendCounted", { body: "two" })).status).toBe(200);
    expect(await count()).toBe(2);
    // The wrapper's write rolls back with the handler's.
    expect((await call("mutation", "messages:sendCountedThenThrow", { body: "three" })).status).toBe(400);
    expect(await count()).toBe(2);
    expect(await byAuthor("counted")).toEqual(["one", "two"]);
    // Unwrapped mutations are not counted.
    await call("mutation", "messages:send", { body: "plain", author: "plain" });
    expect(await count()).toBe(2);
  });
});
