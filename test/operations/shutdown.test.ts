/**
 * Graceful shutdown of real server processes: SIGTERM while requests and WebSocket calls are in
 * flight. Every request the server accepted before SIGTERM gets its whole answer, new connections
 * are refused, WebSocket clients get their results and then 1001, and the process exits 0.
 */
import type { ChildProcess } from "node:child_process";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { PROTOCOL_VERSION } from "../../src/protocol/messages.ts";
import { PASSWORD } from "../helpers/example-app.ts";
import { type ExampleServer, spawnExampleServer } from "../helpers/example-server.ts";
import { ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const PROBE = pathToFileURL(join(ROOT, "test/helpers/request-probe.mjs")).href;
const GATED_SERVER = join(ROOT, "test/operations/fixtures/gated-server.ts");
const BALANCED_SERVER = join(ROOT, "test/operations/fixtures/balanced-server.ts");

interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

/** One request on its own connection; resolves with the whole body, rejects on a cut connection. */
function send(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((done, fail) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on("error", fail);
    });
    req.on("error", fail);
    req.end(body);
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((done) => child.once("exit", (code, signal) => done({ code, signal })));
}

/** Resolves once `ready()` holds, checked on every chunk `stream` delivers. */
function waitForOutput(stream: NodeJS.ReadableStream, ready: () => boolean): Promise<void> {
  return new Promise((done) => {
    const check = () => {
      if (ready()) {
        stream.off("data", check);
        done();
      }
    };
    stream.on("data", check);
    check();
  });
}

/** The error code of a fresh TCP connection attempt ("connected" when it was accepted). */
function tryConnect(port: number): Promise<string> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      done("connected");
    });
    socket.once("error", (e: NodeJS.ErrnoException) => done(e.code ?? String(e)));
  });
}

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

let example: ExampleServer | undefined;
let gated: SpawnedServer | undefined;
let gate: Server | undefined;

afterEach(async () => {
  await example?.stop("SIGKILL");
  await gated?.kill();
  gate?.closeAllConnections();
  gate?.close();
  example = gated = gate = undefined;
});

describe("SIGTERM under load", () => {
  it("answers every sign-up and query accepted before SIGTERM, refuses new connections, exits 0", async () => {
    const server = await spawnExampleServer({
      DATABASE_URL: tempDatabaseFile(),
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${PROBE}`.trim(),
    });
    example = server;
    const base = server.url;
    const N = 8;
    const signUps = Array.from({ length: N }, (_, i) =>
      send(
        `${base}/api/auth/sign-up/email`,
        "POST",
        { "content-type": "application/json", origin: base },
        JSON.stringify({ name: `User ${i}`, email: `user${i}@example.com`, password: PASSWORD }),
      ),
    );
    const queries = Array.from({ length: N }, () =>
      send(
        `${base}/api/query`,
        "POST",
        { "content-type": "application/json" },
        '{"path":"users:count","args":{}}',
      ),
    );
    const exited = exitOf(server.child);
    // The server has every request in flight (handed to the app), not merely queued in the kernel.
    await waitForOutput(server.child.stdout!, () => count(server.stdout(), /request-start /g) === 2 * N);
    expect(count(server.stdout(), /request-start POST \/api\/auth\/sign-up\/email/g)).toBe(N);
    server.child.kill("SIGTERM");
    await waitForOutput(server.child.stderr!, () =>
      /shutting down: new connections refused/.test(server.stderr()),
    );
    expect(await tryConnect(server.port)).toBe("ECONNREFUSED");

    const answers = await Promise.all([...signUps, ...queries]);
    for (const [i, answer] of answers.slice(0, N).entries()) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).user.email).toBe(`user${i}@example.com`);
    }
    for (const answer of answers.slice(N)) {
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ status: "success" });
    }
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(server.stderr()).not.toMatch(/requests cut/);
    // Every sign-up was committed before the database closed.
    expect(server.stderr()).toMatch(/"msg":"service stopped"/);
  }, 90_000);
});

/** An HTTP server the gated action fetches from: requests wait until the test answers them. */
function startGate(): Promise<{ url: string; arrived(n: number): Promise<ServerResponse[]> }> {
  const waiting: ServerResponse[] = [];
  let notify = () => {};
  const server = createServer((_req, res) => {
    waiting.push(res);
    notify();
  });
  gate = server;
  return new Promise((done) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      done({
        url: `http://127.0.0.1:${port}`,
        arrived: (n) =>
          new Promise((ready) => {
            notify = () => waiting.length >= n && ready(waiting.splice(0));
            notify();
          }),
      });
    }),
  );
}

describe("SIGTERM with calls in flight", () => {
  it("answers an HTTP action and a WebSocket call in flight, then closes the WebSocket with 1001", async () => {
    const { url: gateUrl, arrived } = await startGate();
    gated = await spawnServer(GATED_SERVER, { DATABASE_URL: tempDatabaseFile(), LOG_LEVEL: "info" });
    const server = gated;
    const exited = exitOf(server.child);

    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/sync`);
    const events: string[] = [];
    const closed = new Promise<number>((done) => ws.once("close", (code) => done(code)));
    const connected = new Promise<void>((done) =>
      ws.on("message", (data) => {
        const message = JSON.parse(String(data));
        events.push(message.type === "result" ? `result ${message.value}` : message.type);
        if (message.type === "connected") done();
      }),
    );
    ws.once("open", () => ws.send(JSON.stringify({ type: "connect", v: PROTOCOL_VERSION })));
    await connected;
    ws.send(
      JSON.stringify({ type: "action", id: 1, path: "gate:fetchText", args: { url: `${gateUrl}/ws` } }),
    );
    const http = send(
      `${server.url}/api/action`,
      "POST",
      { "content-type": "application/json" },
      JSON.stringify({ path: "gate:fetchText", args: { url: `${gateUrl}/http` } }),
    );
    // Both calls are running inside the server: each has reached the gate.
    const held = await arrived(2);

    server.child.kill("SIGTERM");
    await waitForOutput(server.child.stderr!, () =>
      /shutting down: new connections refused/.test(server.stderr()),
    );
    expect(await tryConnect(server.port)).toBe("ECONNREFUSED");
    expect(events).toEqual(["connected"]);
    for (const res of held) res.end(`${res.req.url?.slice(1)} done`);

    const answer = await http;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: "success", value: "http done" });
    expect(await closed).toBe(1001);
    expect(events).toEqual(["connected", "result ws done"]);
    expect(await exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("cuts calls still running at SHUTDOWN_TIMEOUT_MS and still exits 0", async () => {
    const { url: gateUrl, arrived } = await startGate();
    gated = await spawnServer(GATED_SERVER, {
      DATABASE_URL: tempDatabaseFile(),
      LOG_LEVEL: "info",
      SHUTDOWN_TIMEOUT_MS: "300",
    });
    const server = gated;
    const exited = exitOf(server.child);
    const http = send(
      `${server.url}/api/action`,
      "POST",
      { "content-type": "application/json" },
      JSON.stringify({ path: "gate:fetchText", args: { url: `${gateUrl}/never` } }),
    );
    await arrived(1);
    server.child.kill("SIGTERM");
    await expect(http).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toMatch(/"msg":"shutdown timeout passed: HTTP requests cut","cut":1/);
  }, 60_000);
});

describe("SIGTERM with SHUTDOWN_DELAY_MS", () => {
  it("keeps serving with /healthz at 503 and Connection: close on every answer, until the delay ends", async () => {
    gated = await spawnServer(BALANCED_SERVER, {
      DATABASE_URL: tempDatabaseFile(),
      LOG_LEVEL: "info",
      // Longer than the test: the delay is ended by the second signal, never waited out.
      SHUTDOWN_DELAY_MS: "600000",
    });
    const server = gated;
    const query = () =>
      send(
        `${server.url}/api/query`,
        "POST",
        { "content-type": "application/json", connection: "keep-alive" },
        '{"path":"messages:byAuthor","args":{"author":"x"}}',
      );
    const before = await query();
    expect(before.headers.connection).toBe("keep-alive");
    expect((await send(`${server.url}/healthz`, "GET")).status).toBe(200);

    const exited = exitOf(server.child);
    server.child.kill("SIGTERM");
    await waitForOutput(server.child.stderr!, () =>
      /shutting down: \/healthz answers 503/.test(server.stderr()),
    );
    // Still accepting and answering, on new connections too; each answer ends its connection.
    const health = await send(`${server.url}/healthz`, "GET");
    expect(health.status).toBe(503);
    expect(JSON.parse(health.body)).toEqual({ status: "draining", code: "DRAINING" });
    const during = await query();
    expect(during.status).toBe(200);
    expect(JSON.parse(during.body)).toEqual({ status: "success", value: [] });
    expect(during.headers.connection).toBe("close");
    expect(server.stderr()).not.toMatch(/new connections refused/);

    server.child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 1, signal: null });
  }, 60_000);
});
