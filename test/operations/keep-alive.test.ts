/**
 * Idle keep-alive connections outlive common proxy idle timeouts: a client (or a proxy's pool)
 * reusing a connection after 6 s idle — Node's default `keepAliveTimeout` is 5 s — still gets its
 * POST answered on that same socket.
 */
import { Agent, request } from "node:http";
import { afterEach, expect, it } from "vitest";
import { app } from "../fixtures/app.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

/** The idle time the scenario is about (longer than Node's 5 s default); not a margin. */
const IDLE_MS = 6_000;

let service: TestService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

function post(
  agent: Agent,
  url: string,
  body: string,
): Promise<{ status: number; body: string; reused: boolean; port: number }> {
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () =>
          done({
            status: res.statusCode ?? 0,
            body: text,
            reused: req.reusedSocket,
            port: req.socket!.localPort!,
          }),
        );
      },
    );
    req.on("error", fail);
    req.end(body);
  });
}

it(
  "answers a POST on a keep-alive connection reused after 6 s idle",
  async () => {
    service = await startTestService(app);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const send = '{"path":"messages:send","args":{"body":"hi","author":"ka"}}';
      const first = await post(agent, `${service.url}/api/mutation`, send);
      expect(first.status).toBe(200);
      expect(first.reused).toBe(false);

      await new Promise((done) => setTimeout(done, IDLE_MS));

      const second = await post(agent, `${service.url}/api/mutation`, send);
      expect(second.status).toBe(200);
      expect(JSON.parse(second.body)).toMatchObject({ status: "success" });
      expect(second.reused).toBe(true);
      expect(second.port).toBe(first.port);
    } finally {
      agent.destroy();
    }
  },
  3 * IDLE_MS + 10_000,
);
