/**
 * A deploy that drops nothing: three instances on one PostgreSQL behind a real HAProxy that
 * health-checks `/healthz`, restarted one after another (SIGTERM, wait for the exit, start the
 * new process on the same port) while HTTP clients on keep-alive connections send mutations and
 * queries and WebSocket clients hold a live query. Each stopping instance keeps serving for its
 * SHUTDOWN_DELAY_MS with `/healthz` at 503 and `Connection: close` on every answer, so the
 * balancer routes elsewhere before anything is refused: no request fails, no connection is
 * reset, every WebSocket client is moved (1001, reconnect, resubscribe) and misses no update.
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { anyApi } from "../../src/backend/functions/references.ts";
import { BackendClient, type ConnectionState } from "../../src/client/index.ts";
import { freePort } from "../helpers/browser.ts";
import { haproxyConfig, haproxyInstalled, startHaproxy, type TestHaproxy } from "../helpers/haproxy.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { eventually } from "../helpers/wait.ts";

const SERVER = join(ROOT, "test/operations/fixtures/balanced-server.ts");
/** Far longer than the balancer needs to see a 503 twice at 250 ms (test/helpers/haproxy.ts). */
const SHUTDOWN_DELAY_MS = "3000";
const HTTP_LOOPS = 6;
const LIVE_CLIENTS = 9;

interface Outcome {
  ok: boolean;
  what: string;
  value?: unknown;
}

/** One JSON POST on `agent`'s keep-alive connections; never rejects, says what went wrong. */
function post(agent: Agent, url: string, body: unknown): Promise<Outcome> {
  return new Promise((done) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("error", (e) => done({ ok: false, what: `response ${String(e)}` }));
        res.on("end", () => {
          let parsed: { status?: string; value?: unknown } | undefined;
          try {
            parsed = JSON.parse(text);
          } catch {
            // reported below
          }
          const ok = res.statusCode === 200 && parsed?.status === "success";
          done({ ok, what: `${res.statusCode} ${text.slice(0, 200)}`, value: parsed?.value });
        });
      },
    );
    req.on("error", (e: NodeJS.ErrnoException) => done({ ok: false, what: e.code ?? String(e) }));
    req.end(JSON.stringify(body));
  });
}

let balancer: TestHaproxy | undefined;
const instances: (SpawnedServer | undefined)[] = [];
const clients: BackendClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(instances.splice(0).map((s) => s?.kill("SIGKILL")));
  await balancer?.stop();
  balancer = undefined;
});

describe.skipIf(!postgresBinDir || !haproxyInstalled)("rolling restart behind HAProxy", () => {
  const postgres = usePostgres();

  it("restarts three instances one by one under HTTP and WebSocket load: no failed request, no lost update", async () => {
    const databaseUrl = await postgres().createDatabase();
    const ports = [await freePort(), await freePort(), await freePort()];
    const start = (i: number) =>
      spawnServer(SERVER, { DATABASE_URL: databaseUrl, PORT: String(ports[i]), SHUTDOWN_DELAY_MS });
    // The first one migrates the empty database alone.
    instances[0] = await start(0);
    [instances[1], instances[2]] = await Promise.all([start(1), start(2)]);
    balancer = await startHaproxy(ports);
    const lb = balancer;
    const allUp = async () => expect(Object.values(await lb.states())).toEqual(["UP", "UP", "UP"]);
    await eventually(allUp);

    // Live clients through the balancer, each recording its connection states.
    const live = Array.from({ length: LIVE_CLIENTS }, () => {
      const states: ConnectionState[] = [];
      const client = new BackendClient(lb.url, {
        WebSocket: WebSocket as never,
        reconnectInitialDelayMs: 50,
        reconnectMaxDelayMs: 500,
        onConnectionChange: (state) => states.push(state),
      });
      clients.push(client);
      let latest: { body: string }[] = [];
      const regressions: string[] = [];
      client.subscribe(anyApi.messages.byAuthor, { author: "live" }, (value) => {
        const next = value as { body: string }[];
        // Messages are never deleted: a value missing one shown before is a stale read.
        const shown = new Set(next.map((m) => m.body));
        for (const m of latest) if (!shown.has(m.body)) regressions.push(m.body);
        latest = next;
      });
      return { states, regressions, latest: () => latest };
    });
    await eventually(() => expect(live.every((c) => c.states.includes("open"))).toBe(true));

    // HTTP load on keep-alive connections: a mutation, then a query, over and over.
    const failures: string[] = [];
    const acknowledged: string[] = [];
    let liveSent = 0;
    let completed = 0;
    let running = true;
    const loops = Array.from({ length: HTTP_LOOPS }, async (_, loop) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = 0; running; i++) {
        // Loop 0 writes what the live clients watch; the others write elsewhere.
        const author = loop === 0 ? "live" : `load-${loop}`;
        const body = loop === 0 ? `live-${liveSent}` : `m-${loop}-${i}`;
        const sent = await post(agent, `${lb.url}/api/mutation`, {
          path: "messages:send",
          args: { body, author },
        });
        if (sent.ok) {
          acknowledged.push(body);
          if (loop === 0) liveSent++;
        } else failures.push(`mutation ${body}: ${sent.what}`);
        const read = await post(agent, `${lb.url}/api/query`, {
          path: "messages:byAuthor",
          args: { author },
        });
        if (!read.ok) failures.push(`query: ${read.what}`);
        completed++;
      }
      agent.destroy();
    });

    for (let i = 0; i < ports.length; i++) {
      const before = completed;
      // Load flows through the balancer before this instance goes.
      await eventually(() => expect(completed).toBeGreaterThan(before + 20));
      const old = instances[i]!;
      const exited = new Promise<number | null>((done) => old.child.once("exit", (code) => done(code)));
      old.child.kill("SIGTERM");
      expect(await exited).toBe(0);
      instances[i] = await start(i);
      await eventually(allUp);
    }
    const after = completed;
    await eventually(() => expect(completed).toBeGreaterThan(after + 20));
    running = false;
    await Promise.all(loops);

    expect(failures).toEqual([]);
    // Every acknowledged mutation is stored.
    const stored = await postgres().sql<{ n: string }>(
      "SELECT count(*) AS n FROM t_messages",
      [],
      databaseUrl,
    );
    expect(Number(stored[0].n)).toBe(acknowledged.length);
    // Every live client was moved at least once and ends with every message written for it.
    const expected = Array.from({ length: liveSent }, (_, i) => `live-${i}`);
    for (const client of live) {
      expect(client.states).toContain("reconnecting");
      expect(client.regressions).toEqual([]);
      await eventually(() => expect(client.latest().map((m) => m.body)).toEqual(expected));
    }
  }, 240_000);
});

describe("the HAProxy configuration of docs/operations.md", () => {
  it("is the one the rolling restart runs", () => {
    const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const block = /```haproxy\n([\s\S]*?)```/.exec(doc)?.[1];
    const config = haproxyConfig({
      frontendPort: 8080,
      serverPorts: [3001, 3002, 3003],
      adminSocket: "/run/haproxy/admin.sock",
    });
    expect(block).toBe(config);
  });
});
