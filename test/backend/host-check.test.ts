/**
 * The fast path answers only requests whose Host header @hono/node-server would accept
 * (`host-check.ts`); the rule is compared here with the adapter itself, so an adapter update that
 * changes it fails this test rather than making the two paths answer differently.
 */
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastApiListener } from "../../src/backend/http/fast-api.ts";
import { hostChecker } from "../../src/backend/http/host-check.ts";
import { modules } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { startTestBackend } from "../helpers/service.ts";

const HOSTS = [
  "127.0.0.1",
  "127.0.0.1:3000",
  "localhost:8080",
  "Example.COM",
  "example.com.",
  "[::1]:3000",
  "[::1]",
  "1.2.3",
  "0x7f.1",
  "ex%41mple.com",
  "a b",
  "host:port",
  "host:99999",
  "user@host",
  "host/path",
  "host?q",
  "xn--nxasmq6b.com",
  "_under.score",
];

function listen(server: Server): Promise<number> {
  return new Promise((done) =>
    server.listen(0, "127.0.0.1", () => done((server.address() as { port: number }).port)),
  );
}

function statusFor(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port,
      path: "/",
      method: "GET",
      headers: { host },
      agent: false,
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

let adapter: Server;
let adapterPort: number;
beforeAll(async () => {
  adapter = createServer(getRequestListener(() => new Response("ok")));
  adapterPort = await listen(adapter);
});
afterAll(async () => {
  adapter.closeAllConnections();
  await new Promise<void>((done) => adapter.close(() => done()));
});

describe("host check", () => {
  it("accepts exactly the Host headers the adapter accepts", async () => {
    const accepts = hostChecker();
    const verdicts: Record<string, { ours: boolean; adapter: boolean }> = {};
    for (const host of HOSTS) {
      const status = await statusFor(adapterPort, host);
      expect([200, 400], host).toContain(status);
      verdicts[host] = { ours: accepts(host), adapter: status === 200 };
    }
    for (const [host, v] of Object.entries(verdicts)) expect(v.ours, host).toBe(v.adapter);
    // Both kinds occur, so the comparison means something.
    expect(Object.values(verdicts).some((v) => v.adapter)).toBe(true);
    expect(Object.values(verdicts).some((v) => !v.adapter)).toBe(true);
    // Cached verdicts stay the same.
    for (const host of HOSTS) expect(accepts(host), host).toBe(verdicts[host].ours);
  });

  it("leaves function calls without a Host header, or with one the adapter refuses, to Hono", async () => {
    const backend = await startTestBackend({ schema, modules });
    const server = createServer(
      fastApiListener(backend, { maxBodyBytes: 4096 }, (_req, res) => {
        res.writeHead(299, { "x-fallback": "1", connection: "close" });
        res.end();
      }),
    );
    try {
      const port = await listen(server);
      const body = JSON.stringify({ path: "messages:list" });
      const send = (head: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, "127.0.0.1");
          let text = "";
          socket.setEncoding("utf8");
          socket.on("data", (d) => (text += d));
          socket.on("error", reject);
          socket.on("close", () => resolve(text));
          socket.write(
            `${head}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          );
        });
      expect(await send("POST /api/query HTTP/1.0")).toMatch(/^HTTP\/1\.1 299 .*x-fallback: 1/is);
      expect(await send("POST /api/query HTTP/1.1\r\nHost: 1.2.3")).toMatch(/^HTTP\/1\.1 299 /);
      // With a good Host the fast path answers itself.
      expect(await send("POST /api/query HTTP/1.1\r\nHost: 127.0.0.1")).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await backend.close();
    }
  });
});
