import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modules, routes } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { callFunction, getJson, postJson } from "../helpers/http.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

/**
 * POSTs a chunked body of `chunks` × `chunkSize` bytes with node:http (fetch gives up when the
 * server answers before the upload ends) and resolves with the response.
 */
function postChunked(
  url: string,
  chunkSize: number,
  chunks: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      agent: false,
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.write('{"path":"messages:send","args":{"body":"');
    let sent = 0;
    const pump = () => {
      while (sent < chunks) {
        sent++;
        if (!req.write("x".repeat(chunkSize))) return void req.once("drain", pump);
      }
      req.end('"}}');
    };
    pump();
  });
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ schema, modules, routes });
});
afterAll(() => service.close());

describe("HTTP API", () => {
  it("POST /api/query|mutation|action return {status: success, value}", async () => {
    const sent = await callFunction(service.url, "mutation", "messages:send", { body: "hi", author: "http" });
    expect(sent.status).toBe(200);
    expect(sent.headers.get("content-type")).toMatch(/application\/json/);
    expect(sent.body).toEqual({ status: "success", value: expect.stringMatching(/^[a-z2-7]{30}$/) });
    const listed = await callFunction(service.url, "query", "messages:byAuthor", { author: "http" });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      status: "success",
      value: [{ _id: sent.body.value, _creationTime: expect.any(Number), body: "hi", author: "http" }],
    });
    const acted = await callFunction(service.url, "action", "actions:sendAndCount", { body: "a" });
    expect(acted.status).toBe(200);
    expect(acted.body.status).toBe("success");
    // Omitted args count as {}.
    const noArgs = await postJson(`${service.url}/api/query`, { path: "messages:list" });
    expect(noArgs.status).toBe(200);
    expect(noArgs.body.value.length).toBeGreaterThanOrEqual(2);
  });

  it("malformed JSON and bodies without a path are 400 BAD_REQUEST", async () => {
    for (const body of ["{not json", "", "null", "[]", '"messages:list"', '{"args":{}}', '{"path":5}']) {
      const r = await postJson(`${service.url}/api/query`, body);
      expect(r.status, body).toBe(400);
      expect(r.body).toMatchObject({ status: "error", code: "BAD_REQUEST" });
      expect(typeof r.body.message).toBe("string");
    }
  });

  it("unknown functions are 404 FUNCTION_NOT_FOUND", async () => {
    for (const path of ["messages:nope", "nope:list", "messages", ""]) {
      const r = await callFunction(service.url, "query", path);
      expect(r.status, path).toBe(404);
      expect(r.body).toMatchObject({ status: "error", code: "FUNCTION_NOT_FOUND" });
    }
  });

  it("an unknown function's 404 names the closest public functions of that kind, never an internal one", async () => {
    const typo = await callFunction(service.url, "query", "messages:lst");
    expect(typo.status).toBe(404);
    expect(typo.body).toMatchObject({ code: "FUNCTION_NOT_FOUND" });
    // Closest first.
    expect(typo.body.message).toMatch(/^No function "messages:lst"; did you mean messages:list[,?]/);
    // messages:secretCount is internal: a client hears of no such function, not even as a suggestion.
    const internal = await callFunction(service.url, "query", "messages:secretCounts");
    expect(internal.status).toBe(404);
    expect(internal.body.message).not.toMatch(/secretCount\b/);
    // A query path is no suggestion for a mutation call.
    const kind = await callFunction(service.url, "mutation", "messages:lst");
    expect(kind.body.message).not.toMatch(/messages:list/);
    // A very long path is not compared (the edit distance costs the product of the lengths).
    const long = await callFunction(service.url, "query", `messages:list${"x".repeat(5000)}`);
    expect(long.status).toBe(404);
    expect(long.body.message).not.toMatch(/did you mean/);
  });

  it("wrong argument types are 400 INVALID_ARGUMENTS", async () => {
    const r = await callFunction(service.url, "query", "messages:byAuthor", { author: 5 });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: "INVALID_ARGUMENTS",
      data: { path: "args.author", expected: "string" },
    });
  });

  it("bodies over 1 MiB are 413 PAYLOAD_TOO_LARGE, with or without a content-length", async () => {
    const big = JSON.stringify({ path: "messages:send", args: { body: "x".repeat(1024 * 1024) } });
    const r = await postJson(`${service.url}/api/mutation`, big);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ status: "error", code: "PAYLOAD_TOO_LARGE" });
    expect(r.headers.get("connection")).toBe("close");

    // Chunked: the server must stop reading at the limit and answer 413.
    const chunked = await postChunked(`${service.url}/api/mutation`, 64 * 1024, 40);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text).code).toBe("PAYLOAD_TOO_LARGE");

    // Just under the limit is fine.
    const ok = await callFunction(service.url, "mutation", "messages:send", {
      body: "y".repeat(1000 * 1000),
      author: "big",
    });
    expect(ok.status).toBe(200);
  });

  it("a schema violation is 400 SCHEMA_VIOLATION and changes nothing", async () => {
    const r = await callFunction(service.url, "mutation", "messages:sendThenViolate", { author: "violator" });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      status: "error",
      code: "SCHEMA_VIOLATION",
      data: { path: "messages.body", expected: "string" },
    });
    expect(r.body.message).toContain("messages.body");
    const after = await callFunction(service.url, "query", "messages:byAuthor", { author: "violator" });
    expect(after.body.value).toEqual([]);
  });

  it("a handler throwing a plain Error is 500 INTERNAL with a request id and no details", async () => {
    const r = await callFunction(service.url, "query", "messages:crash");
    expect(r.status).toBe(500);
    expect(Object.keys(r.body).sort()).toEqual(["code", "message", "status"]);
    expect(r.body.code).toBe("INTERNAL");
    expect(r.body.message).toMatch(/request [0-9a-f-]{36}/);
    expect(r.text).not.toContain("secret-internal-detail");
    expect(r.text).not.toMatch(/\bat .*\.ts/);
    expect(r.text).not.toContain("stack");
    const again = await callFunction(service.url, "query", "messages:crash");
    expect(again.body.message).not.toBe(r.body.message);
  });

  it("GET /healthz is 200", async () => {
    const r = await getJson(`${service.url}/healthz`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok" });
  });

  it("application routes get the action ctx as c.env", async () => {
    await callFunction(service.url, "mutation", "messages:send", { body: "routed", author: "route" });
    const hello = await fetch(`${service.url}/hello`);
    expect(hello.status).toBe(200);
    expect(await hello.text()).toBe("hello");
    const r = await getJson(`${service.url}/messages/route`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ count: 1, bodies: ["routed"] });
    expect((await fetch(`${service.url}/no-such-route`)).status).toBe(404);
  });
});
