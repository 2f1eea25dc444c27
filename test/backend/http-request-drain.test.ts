/**
 * `RequestDrain` on a real `node:http` server created with its `Response` class: the count of
 * requests in flight (also when a client goes away mid-request), `Connection: close` on answers
 * not yet written when the drain is announced, and the keep-alive Node itself turns off (an
 * HTTP/1.0 request) staying off.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { RequestDrain } from "../../src/backend/http/request-drain.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
});

/** A server whose every request waits in `held` until the test answers it. */
async function heldServer(
  drain: RequestDrain,
): Promise<{ port: number; held: ServerResponse[]; arrived: () => Promise<void> }> {
  const held: ServerResponse[] = [];
  let wake: (() => void) | undefined;
  server = createServer(
    { ServerResponse: drain.Response },
    drain.listener((_req: IncomingMessage, res: ServerResponse) => {
      held.push(res);
      wake?.();
    }),
  );
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  let seen = 0;
  // Resolves once one more request than last time has reached the listener.
  const arrived = () =>
    new Promise<void>((done) => {
      const check = () => {
        if (held.length > seen) {
          seen++;
          wake = undefined;
          done();
        }
      };
      wake = check;
      check();
    });
  return { port, held, arrived };
}

/** A raw connection that sends `request` and collects what comes back until the server closes. */
function rawRequest(port: number, request: string): { socket: Socket; reply: Promise<string> } {
  const socket = connect(port, "127.0.0.1");
  socket.write(request);
  const reply = new Promise<string>((done, fail) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => (text += chunk));
    socket.on("close", () => done(text));
    socket.on("error", fail);
  });
  return { socket, reply };
}

const GET_11 = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

it("counts requests until their responses close, answered or abandoned, each once", async () => {
  const drain = new RequestDrain();
  const { port, held, arrived } = await heldServer(drain);
  const a = rawRequest(port, GET_11);
  await arrived();
  const b = rawRequest(port, GET_11);
  await arrived();
  expect(drain.inFlight).toBe(2);

  // The client of the second request goes away: its response closes unanswered.
  const bClosed = new Promise((done) => held[1].once("close", done));
  b.socket.destroy();
  await bClosed;
  expect(drain.inFlight).toBe(1);

  const aClosed = new Promise((done) => held[0].once("close", done));
  held[0].end("done");
  await aClosed;
  // A second `close` (Node may emit one more) does not count twice.
  held[0].emit("close");
  expect(drain.inFlight).toBe(0);
  a.socket.destroy();
  await a.reply;
});

it("answers Connection: close on a response not yet written when the drain is announced", async () => {
  const drain = new RequestDrain();
  const { port, held, arrived } = await heldServer(drain);
  const before = rawRequest(port, GET_11);
  await arrived();
  held[0].setHeader("x-before", "1"); // headers set but not written: still up to the drain
  drain.announce();
  held[0].end("late");
  const reply = await before.reply; // the server closes the connection after the answer
  expect(reply).toMatch(/^HTTP\/1\.1 200/);
  expect(reply.toLowerCase()).toContain("connection: close");
  expect(reply.endsWith("late")).toBe(true);
});

it("keeps alive what Node keeps alive before the drain, and not an HTTP/1.0 request", async () => {
  const drain = new RequestDrain();
  const { port, held, arrived } = await heldServer(drain);
  const keep = rawRequest(port, GET_11);
  await arrived();
  let head = "";
  const headRead = new Promise<void>((done) =>
    keep.socket.on("data", (chunk) => {
      head += chunk;
      if (head.includes("kept")) done();
    }),
  );
  held[0].end("kept");
  await headRead;
  expect(head.toLowerCase()).toContain("connection: keep-alive");
  keep.socket.destroy();

  // Node sets `shouldKeepAlive = false` in the response's constructor for HTTP/1.0; with a
  // Content-Length it would otherwise answer keep-alive.
  const old = rawRequest(port, "GET / HTTP/1.0\r\n\r\n");
  await arrived();
  held[1].setHeader("content-length", "3");
  held[1].end("old");
  const reply = await old.reply;
  expect(reply).toMatch(/^HTTP\/1\.1 200/);
  expect(reply.toLowerCase()).toContain("connection: close");
  expect(drain.inFlight).toBe(0);
});

/** Resolves once `socket` (the server's side of a connection) has read more than `bytes`. */
async function readMoreThan(socket: Socket, bytes: number): Promise<void> {
  while (socket.bytesRead <= bytes) await new Promise((done) => setTimeout(done, 2));
}

// Node 26 (nodejs/node#63470) counts a connection as idle until its first request's first byte
// is read, and its `server.close()` cut such a connection: a health check whose request was on
// the wire but not read yet got ECONNRESET (test/operations/healthz-draining.test.ts).
it("closes idle keep-alive connections at once, and keeps those whose request is still to come", async () => {
  const drain = new RequestDrain();
  const { port, held, arrived } = await heldServer(drain);
  const accepted: Socket[] = [];
  server!.on("connection", (socket: Socket) => accepted.push(socket));
  const untilAccepted = async (n: number) => {
    while (accepted.length < n) await new Promise((done) => setTimeout(done, 2));
    return accepted[n - 1];
  };
  /** Sends a request on a raw connection and resolves once its answer ends with `body`. */
  const answered = (socket: Socket, body: string) =>
    new Promise<string>((done) => {
      let text = "";
      const onData = (chunk: Buffer) => {
        text += chunk;
        if (text.endsWith(body)) {
          socket.off("data", onData);
          done(text);
        }
      };
      socket.on("data", onData);
    });

  // Kept alive and idle: the drain closes it at once.
  const idle = rawRequest(port, GET_11);
  await arrived();
  const idleAnswer = answered(idle.socket, "a");
  held[0].end("a");
  await idleAnswer;

  // Answered once, then its next request's head is half sent (and read by the server).
  const next = rawRequest(port, GET_11);
  await arrived();
  const firstAnswer = answered(next.socket, "b");
  held[1].end("b");
  await firstAnswer;
  const nextServerSide = accepted[1];
  const readBefore = nextServerSide.bytesRead;
  next.socket.write("GET / HTTP/1.1\r\nHost: x\r\n");
  await readMoreThan(nextServerSide, readBefore);

  // In flight: keeps the drain open.
  const busy = rawRequest(port, GET_11);
  await arrived();

  // Accepted, nothing sent yet.
  const fresh = connect(port, "127.0.0.1");
  const freshReply = new Promise<string>((done, fail) => {
    let text = "";
    fresh.setEncoding("utf8");
    fresh.on("data", (chunk) => (text += chunk));
    fresh.on("close", () => done(text));
    fresh.on("error", fail);
  });
  await untilAccepted(4);

  const closing = drain.close(server!, Date.now() + 10_000);
  const idleText = await idle.reply;
  expect(idleText).toMatch(/^HTTP\/1\.1 200 /);
  expect(idleText.endsWith("a")).toBe(true);

  // Both finish their requests and are answered, with `Connection: close`.
  fresh.write(GET_11);
  await arrived();
  next.socket.write("\r\n");
  await arrived();
  held[3].end("fresh");
  held[4].end("next");
  const freshText = await freshReply;
  expect(freshText).toMatch(/^HTTP\/1\.1 200 /);
  expect(freshText.toLowerCase()).toContain("connection: close");
  expect(freshText.endsWith("fresh")).toBe(true);
  const nextText = await next.reply;
  expect(nextText.toLowerCase()).toContain("connection: close");
  expect(nextText.endsWith("next")).toBe(true);

  held[2].end("busy");
  expect((await busy.reply).endsWith("busy")).toBe(true);
  expect(await closing).toBe(0);
});
