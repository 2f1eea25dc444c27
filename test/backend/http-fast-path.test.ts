/**
 * The `node:http` fast path of `POST /api/query|mutation|action` answers exactly like the Hono
 * route it bypasses (status, body, CORS headers), and every other request still reaches Hono.
 */
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHttpApp, type HttpRoutes } from "../../src/backend/http/app.ts";
import { corsHeaders } from "../../src/backend/http/cors-policy.ts";
import { endpointOf, fastApiListener } from "../../src/backend/http/fast-api.ts";
import { modules } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { callFunction, getJson, postJson } from "../helpers/http.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

const SITE = "http://site.test";
const MAX_BODY = 4096;

/** App routes with the cross-origin rule the auth integration uses (origin SITE_URL, credentials). */
const routesApp = new Hono()
  .get("/hello", (c) => c.text("hello"))
  .get("/api/custom", (c) => c.json({ custom: true }));
const routes: HttpRoutes = {
  fetch: (request) => routesApp.fetch(request),
  cors: (env) => ({
    origin: env.get("SITE_URL") ?? SITE,
    allowHeaders: ["Content-Type", "Authorization"],
    exposeHeaders: ["Set-Service-Auth-Cookie"],
    allowMethods: ["GET", "POST", "OPTIONS"],
    credentials: true,
  }),
};

/** Raw POST with node:http (exact bytes, optional chunked upload); resolves status, headers, text. */
function rawPost(
  url: string,
  chunks: string[],
  headers: Record<string, string | string[]> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers, agent: false });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

const CORS_NAMES = [
  "access-control-allow-origin",
  "access-control-allow-credentials",
  "access-control-expose-headers",
  "vary",
] as const;
const corsOf = (headers: Headers) => Object.fromEntries(CORS_NAMES.map((n) => [n, headers.get(n)]));

let service: TestService;
let plain: TestService;
/** The Hono app alone (the path the fast path replaces), served by @hono/node-server. */
let honoOnly: { server: Server; url: string };

beforeAll(async () => {
  service = await startTestService({ schema, modules, routes, maxBodyBytes: MAX_BODY });
  plain = await startTestService({ schema, modules });
  const { getRequestListener } = await import("@hono/node-server");
  const app = createHttpApp(service.backend, { routes, maxBodyBytes: MAX_BODY });
  const server = createServer(getRequestListener(app.fetch));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  honoOnly = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
afterAll(async () => {
  honoOnly.server.closeAllConnections();
  await new Promise<void>((done) => honoOnly.server.close(() => done()));
  await service.close();
  await plain.close();
});

describe("function API fast path", () => {
  it("answers success with the same status, content type and body as the Hono route", async () => {
    const sent = await callFunction(service.url, "mutation", "messages:send", { body: "fast", author: "fp" });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ status: "success", value: expect.stringMatching(/^[a-z2-7]{30}$/) });
    for (const url of [service.url, honoOnly.url]) {
      const r = await callFunction(url, "query", "messages:byAuthor", { author: "fp" });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(Number(r.headers.get("content-length"))).toBe(Buffer.byteLength(r.text));
      expect(r.body).toEqual({
        status: "success",
        value: [{ _id: sent.body.value, _creationTime: expect.any(Number), body: "fast", author: "fp" }],
      });
    }
    const acted = await callFunction(service.url, "action", "actions:sendAndCount", { body: "fp-action" });
    expect(acted.status).toBe(200);
    expect(acted.body.status).toBe("success");
    // A query string does not change the endpoint; omitted args count as {}.
    const qs = await postJson(`${service.url}/api/query?x=1`, { path: "messages:list" });
    expect(qs.status).toBe(200);
    expect(qs.body.value.length).toBeGreaterThanOrEqual(2);
  });

  it("gives every error the same status and body as the Hono route", async () => {
    const bodies = [
      "{not json",
      "",
      "null",
      "[]",
      '{"args":{}}',
      '{"path":5}',
      JSON.stringify({ path: "messages:nope" }),
      JSON.stringify({ path: "messages:secretCount" }),
      JSON.stringify({ path: "messages:list", args: [] }),
      JSON.stringify({ path: "messages:byAuthor", args: { author: 5 } }),
      JSON.stringify({ path: "messages:sendThenViolate", args: { author: "v" } }),
    ];
    for (const kind of ["query", "mutation"] as const) {
      for (const body of bodies) {
        const fast = await postJson(`${service.url}/api/${kind}`, body);
        const hono = await postJson(`${honoOnly.url}/api/${kind}`, body);
        expect(fast.status, `${kind} ${body}`).toBe(hono.status);
        expect(fast.text, `${kind} ${body}`).toBe(hono.text);
        expect(fast.headers.get("content-type")).toBe("application/json");
      }
    }
    const notJson = await postJson(`${service.url}/api/query`, "{not json");
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({
      status: "error",
      code: "BAD_REQUEST",
      message: "Request body must be JSON",
    });
    const noPath = await postJson(`${service.url}/api/query`, '{"args":{}}');
    expect(noPath.status).toBe(400);
    expect(noPath.body.code).toBe("BAD_REQUEST");
    const unknown = await callFunction(service.url, "query", "messages:nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("FUNCTION_NOT_FOUND");
    const badArgs = await callFunction(service.url, "query", "messages:byAuthor", { author: 5 });
    expect(badArgs.status).toBe(400);
    expect(badArgs.body).toMatchObject({ code: "INVALID_ARGUMENTS", data: { path: "args.author" } });
  });

  it("parses a body with a UTF-8 byte order mark, as Request.json() does", async () => {
    const r = await postJson(
      `${service.url}/api/query`,
      `\ufeff${JSON.stringify({ path: "messages:list" })}`,
    );
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("success");
  });

  it("answers an internal error with 500 INTERNAL, a request id and no details", async () => {
    const r = await callFunction(service.url, "query", "messages:crash");
    expect(r.status).toBe(500);
    expect(Object.keys(r.body).sort()).toEqual(["code", "message", "status"]);
    expect(r.body).toMatchObject({ status: "error", code: "INTERNAL" });
    expect(r.body.message).toMatch(/^Internal server error \(request [0-9a-f-]{36}\)$/);
    expect(r.text).not.toContain("secret-internal-detail");
    expect(r.text).not.toContain("stack");
  });

  it("refuses a bearer token with 401 UNAUTHORIZED when auth is not configured", async () => {
    const r = await callFunction(
      service.url,
      "query",
      "messages:list",
      {},
      { authorization: "Bearer abc.def.ghi" },
    );
    expect(r.status).toBe(401);
    expect(r.body).toEqual({
      status: "error",
      code: "UNAUTHORIZED",
      message: "Authentication is not configured",
    });
    // Not a bearer token: no caller token, the query runs.
    const basic = await callFunction(
      service.url,
      "query",
      "messages:list",
      {},
      { authorization: "Basic eHl6" },
    );
    expect(basic.status).toBe(200);
    // Repeated Authorization headers are joined (as web Headers do) and then are not one bearer token.
    const twice = await rawPost(`${service.url}/api/query`, [JSON.stringify({ path: "messages:list" })], {
      "content-type": "application/json",
      authorization: ["Bearer a", "Bearer b"],
    });
    const twiceHono = await rawPost(
      `${honoOnly.url}/api/query`,
      [JSON.stringify({ path: "messages:list" })],
      {
        "content-type": "application/json",
        authorization: ["Bearer a", "Bearer b"],
      },
    );
    expect(twice.status).toBe(twiceHono.status);
    expect(twice.status).toBe(200);
  });

  it("answers 413 PAYLOAD_TOO_LARGE with Connection: close, by content-length or while streaming", async () => {
    const big = JSON.stringify({
      path: "messages:send",
      args: { body: "x".repeat(MAX_BODY), author: "big" },
    });
    const r = await postJson(`${service.url}/api/mutation`, big);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({
      status: "error",
      code: "PAYLOAD_TOO_LARGE",
      message: `Request body exceeds ${MAX_BODY} bytes`,
    });
    expect(r.headers.get("connection")).toBe("close");
    const chunked = await rawPost(
      `${service.url}/api/mutation`,
      Array.from({ length: 6 }, () => "x".repeat(1024)),
      { "content-type": "application/json", "transfer-encoding": "chunked" },
    );
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text).code).toBe("PAYLOAD_TOO_LARGE");
    expect(chunked.headers.connection).toBe("close");
    // Under the limit, also chunked, is fine.
    const body = JSON.stringify({
      path: "messages:send",
      args: { body: "y".repeat(1000), author: "chunks" },
    });
    const ok = await rawPost(`${service.url}/api/mutation`, [body.slice(0, 10), body.slice(10)], {
      "content-type": "application/json",
      "transfer-encoding": "chunked",
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).status).toBe("success");
  });

  it("adds the same CORS headers as hono/cors for allowed, other and missing origins", async () => {
    const call = (url: string, origin?: string) =>
      callFunction(url, "query", "messages:list", {}, origin ? { origin } : {});
    for (const origin of [SITE, "http://evil.test", undefined]) {
      const fast = await call(service.url, origin);
      const hono = await call(honoOnly.url, origin);
      expect(fast.status).toBe(200);
      expect(corsOf(fast.headers), String(origin)).toEqual(corsOf(hono.headers));
    }
    const allowed = await call(service.url, SITE);
    expect(corsOf(allowed.headers)).toEqual({
      "access-control-allow-origin": SITE,
      "access-control-allow-credentials": "true",
      "access-control-expose-headers": "Set-Service-Auth-Cookie",
      vary: "Origin",
    });
    expect(
      corsOf((await call(service.url, "http://evil.test")).headers)["access-control-allow-origin"],
    ).toBeNull();
    // Error answers carry them too.
    const err = await postJson(`${service.url}/api/query`, "{", { origin: SITE });
    const errHono = await postJson(`${honoOnly.url}/api/query`, "{", { origin: SITE });
    expect(err.status).toBe(400);
    expect(corsOf(err.headers)).toEqual(corsOf(errHono.headers));
    const tooBig = await postJson(`${service.url}/api/query`, "x".repeat(MAX_BODY + 1), { origin: SITE });
    const tooBigHono = await postJson(`${honoOnly.url}/api/query`, "x".repeat(MAX_BODY + 1), {
      origin: SITE,
    });
    expect(tooBig.status).toBe(413);
    expect(corsOf(tooBig.headers)).toEqual(corsOf(tooBigHono.headers));
    // Without a cors rule there are none.
    const none = await callFunction(plain.url, "query", "messages:list", {}, { origin: SITE });
    expect(corsOf(none.headers)).toEqual({
      "access-control-allow-origin": null,
      "access-control-allow-credentials": null,
      "access-control-expose-headers": null,
      vary: null,
    });
  });

  it("takes the CORS headers of POSTs from the cors policy: origin lists, '*', functions", () => {
    const post = (origin: string) => ({ origin, method: "POST" });
    expect(corsHeaders({ origin: ["http://a.test", "http://b.test"] }, post("http://b.test"))).toEqual([
      ["access-control-allow-origin", "http://b.test"],
      ["vary", "Origin"],
    ]);
    expect(corsHeaders({ origin: ["http://a.test"] }, post("http://c.test"))).toEqual([["vary", "Origin"]]);
    expect(corsHeaders({}, post("http://c.test"))).toEqual([["access-control-allow-origin", "*"]]);
    expect(corsHeaders({ origin: "*", exposeHeaders: ["X-A", "X-B"] }, post(""))).toEqual([
      ["access-control-allow-origin", "*"],
      ["access-control-expose-headers", "X-A,X-B"],
    ]);
    // A function origin decides per request origin.
    const mirror = { origin: (o: string) => (o.endsWith(".a.test") ? o : null) };
    expect(corsHeaders(mirror, post("http://x.a.test"))).toEqual([
      ["access-control-allow-origin", "http://x.a.test"],
      ["vary", "Origin"],
    ]);
    expect(corsHeaders(mirror, post("http://b.test"))).toEqual([["vary", "Origin"]]);
  });

  it("still sends preflights, health checks, app routes and other methods to Hono", async () => {
    const preflight = await fetch(`${service.url}/api/query`, {
      method: "OPTIONS",
      headers: { origin: SITE, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET,POST,OPTIONS");
    expect(preflight.headers.get("access-control-allow-origin")).toBe(SITE);
    expect((await getJson(`${service.url}/healthz`)).body).toEqual({ status: "ok" });
    const hello = await fetch(`${service.url}/hello`);
    expect(await hello.text()).toBe("hello");
    const custom = await getJson(`${service.url}/api/custom`, { origin: SITE });
    expect(custom.body).toEqual({ custom: true });
    expect(custom.headers.get("access-control-allow-origin")).toBe(SITE);
    const get = await fetch(`${service.url}/api/query`);
    expect(get.status).toBe(404);
    expect((await fetch(`${plain.url}/no-such-route`)).status).toBe(404);
  });

  it("takes exactly the POST /api/{kind} requests and hands everything else to the fallback", async () => {
    expect(endpointOf("/api/query")).toBe("query");
    expect(endpointOf("/api/mutation?x=1")).toBe("mutation");
    expect(endpointOf("/api/action")).toBe("action");
    for (const url of [
      "/api/query/",
      "/api/%71uery",
      "/api/queryx",
      "/api/query#x",
      "/api/auth/session",
      "/healthz",
      "http://h/api/query",
    ]) {
      expect(endpointOf(url), url).toBeUndefined();
    }
    // A real server whose fallback marks its answers: which requests reached it?
    const server = createServer(
      fastApiListener(plain.backend, { maxBodyBytes: MAX_BODY }, (_req, res) => {
        res.writeHead(299, { "x-fallback": "1" });
        res.end();
      }),
    );
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const fast = await callFunction(url, "query", "messages:list");
      expect(fast.status).toBe(200);
      expect(fast.headers.get("x-fallback")).toBeNull();
      expect((await callFunction(url, "query", "messages:nope")).status).toBe(404);
      for (const [method, path] of [
        ["GET", "/api/query"],
        ["OPTIONS", "/api/query"],
        ["POST", "/api/query/"],
        ["POST", "/api/auth/sign-in"],
        ["GET", "/healthz"],
      ]) {
        const r = await fetch(`${url}${path}`, { method, ...(method === "POST" ? { body: "{}" } : {}) });
        expect(r.headers.get("x-fallback"), `${method} ${path}`).toBe("1");
      }
      // A Host header the Node adapter would refuse is left to it as well.
      const badHost = await rawPost(`${url}/api/query`, ["{}"], { host: "1.2.3" });
      expect(badHost.headers["x-fallback"]).toBe("1");
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    }
  });
  it("answers pipelined calls on one connection in request order, errors among them", async () => {
    const authors = Array.from({ length: 12 }, (_, i) => `pipelined-${i}`);
    for (const author of authors)
      await callFunction(plain.url, "mutation", "messages:send", { body: author, author });
    // Every third call fails (a query that throws): its 500 must come back in its place too.
    const calls = authors.map((author, i) =>
      i % 3 === 2 ? { path: "messages:crash", args: {} } : { path: "messages:byAuthor", args: { author } },
    );
    const socket = connect(plain.port, "127.0.0.1");
    socket.setEncoding("utf8");
    let received = "";
    socket.on("data", (d: string) => (received += d));
    // All requests in one write: the server reads them together and answers each in turn.
    socket.write(
      calls
        .map((call) => {
          const body = JSON.stringify(call);
          return `POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
        })
        .join(""),
    );
    /** The answers complete so far, parsed by their Content-Length. */
    const parse = () => {
      const answers: { status: number; body: string }[] = [];
      let rest = received;
      for (;;) {
        const end = rest.indexOf("\r\n\r\n");
        if (end === -1) break;
        const head = rest.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
        if (rest.length < end + 4 + length) break;
        answers.push({ status: Number(head.split(" ")[1]), body: rest.slice(end + 4, end + 4 + length) });
        rest = rest.slice(end + 4 + length);
      }
      return answers;
    };
    try {
      await vi.waitFor(() => expect(parse()).toHaveLength(calls.length), { timeout: 10_000 });
    } finally {
      socket.destroy();
    }
    parse().forEach((answer, i) => {
      if (calls[i].path === "messages:crash") {
        expect(answer.status, `answer ${i}`).toBe(500);
        expect(JSON.parse(answer.body).code).toBe("INTERNAL");
      } else {
        expect(answer.status, `answer ${i}`).toBe(200);
        expect(JSON.parse(answer.body).value.map((m: { author: string }) => m.author)).toEqual([authors[i]]);
      }
    });
  });
});
