// Scratch: captures raw HTTP responses for a set of requests (run before and after the change).
import { connect } from "node:net";
import { writeFileSync } from "node:fs";
import { Hono } from "hono";
import { modules } from "./test/fixtures/app.ts";
import schema from "./test/fixtures/schema.ts";
import { startTestService } from "./test/helpers/service.ts";

const routesApp = new Hono<any>().get("/hello", (c) => c.text("hello")).get("/api/custom", (c) => c.json({ ok: 1 }));
const withCors = process.argv[3] === "cors";
const routes = {
  fetch: (r: Request, ctx: any) => routesApp.fetch(r, ctx),
  ...(withCors
    ? {
        cors: () => ({
          origin: "http://site.test",
          allowHeaders: ["Content-Type", "Authorization"],
          exposeHeaders: ["Set-Service-Auth-Cookie", "X-Other"],
          allowMethods: ["GET", "POST", "OPTIONS"],
          credentials: true,
        }),
      }
    : {}),
};
const service = await startTestService({ schema, modules, routes, maxBodyBytes: 4096 });

function raw(data: string | Buffer[], waitClose = false): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(service.port, "127.0.0.1");
    let out = "";
    s.on("data", (d) => (out += d));
    s.on("error", (e) => { out += `\n<<error ${(e as any).code}>>`; });
    s.on("close", () => resolve(out));
    const parts = typeof data === "string" ? [Buffer.from(data)] : data;
    for (const p of parts) s.write(p);
    setTimeout(() => s.end(), 400);
  });
}
const req = (method: string, path: string, body: string | null, headers: Record<string, string> = {}, extra = "") => {
  let h = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}`;
  for (const [k, v] of Object.entries(headers)) h += `${k}: ${v}\r\n`;
  if (body !== null) h += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return `${h}\r\n${body ?? ""}`;
};
const q = (path: string, args: unknown = {}) => JSON.stringify({ path, args });
const cases: Record<string, string | Buffer[]> = {
  list: req("POST", "/api/query", q("messages:list")),
  listQs: req("POST", "/api/query?x=1", q("messages:list")),
  trailing: req("POST", "/api/query/", q("messages:list")),
  encoded: req("POST", "/api/%71uery", q("messages:list")),
  getQuery: req("GET", "/api/query", null),
  malformed: req("POST", "/api/query", "{not json"),
  empty: req("POST", "/api/query", ""),
  nullBody: req("POST", "/api/query", "null"),
  noPath: req("POST", "/api/query", '{"args":{}}'),
  bom: req("POST", "/api/query", `\ufeff${q("messages:list")}`),
  unknown: req("POST", "/api/query", q("messages:nope")),
  wrongKind: req("POST", "/api/mutation", q("messages:list")),
  internal: req("POST", "/api/query", q("messages:secretCount")),
  badArgs: req("POST", "/api/query", q("messages:byAuthor", { author: 5 })),
  argsArray: req("POST", "/api/query", JSON.stringify({ path: "messages:list", args: [] })),
  crash: req("POST", "/api/query", q("messages:crash")),
  violate: req("POST", "/api/mutation", q("messages:sendThenViolate", { author: "v" })),
  action: req("POST", "/api/action", q("actions:sendAndCount", { body: "a" })),
  bearer: req("POST", "/api/query", q("messages:list"), { Authorization: "Bearer abc.def.ghi" }),
  bearerBad: req("POST", "/api/query", q("messages:list"), { Authorization: "Basic xyz" }),
  bearerDup: req("POST", "/api/query", q("messages:list"), {}, "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n"),
  big: req("POST", "/api/mutation", q("messages:send", { body: "x".repeat(5000), author: "b" })),
  bigChunked: [
    Buffer.from("POST /api/mutation HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"),
    Buffer.from(`1000\r\n${"x".repeat(4096)}\r\n`),
    Buffer.from(`1000\r\n${"x".repeat(4096)}\r\n`),
    Buffer.from("0\r\n\r\n"),
  ],
  okChunked: [
    Buffer.from("POST /api/query HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"),
    Buffer.from(`5\r\n{"pat\r\n`),
    Buffer.from(`${(q("messages:list").length - 5).toString(16)}\r\n${q("messages:list").slice(5)}\r\n0\r\n\r\n`),
  ],
  originOk: req("POST", "/api/query", q("messages:list"), { Origin: "http://site.test" }),
  originBad: req("POST", "/api/query", q("messages:list"), { Origin: "http://evil.test" }),
  originNone413: req("POST", "/api/query", "x".repeat(5000), { Origin: "http://site.test" }),
  originErr: req("POST", "/api/query", "{", { Origin: "http://site.test" }),
  preflight: req("OPTIONS", "/api/query", null, { Origin: "http://site.test", "Access-Control-Request-Method": "POST" }),
  health: req("GET", "/healthz", null),
  hello: req("GET", "/hello", null),
  custom: req("GET", "/api/custom", null, { Origin: "http://site.test" }),
  http10: ["POST /api/query HTTP/1.0\r\nContent-Length: 33\r\n\r\n", q("messages:list")].map((s) => Buffer.from(s)),
  badHost: req("POST", "/api/query", q("messages:list")).replace("Host: 127.0.0.1", "Host: 1.2.3"),
  keepalive: [Buffer.from(req("POST", "/api/query", q("messages:list")).replace("Connection: close\r\n", "") + req("POST", "/api/query", "{"))],
};
const normalize = (s: string) =>
  s
    .replace(/Date: .*\r\n/gi, "Date: X\r\n")
    .replace(/request [0-9a-f-]{36}/g, "request ID")
    .replace(/"_id":"[a-z2-7]+"/g, '"_id":"ID"')
    .replace(/"_creationTime":[0-9.]+/g, '"_creationTime":T')
    .replace(/"value":\d+/g, '"value":N');
let out = "";
for (const [name, data] of Object.entries(cases)) out += `=== ${name}\n${normalize(await raw(data))}\n`;
writeFileSync(process.argv[2], out);
await service.close();
process.exit(0);
