/**
 * `/healthz` during shutdown: once the service has begun to close it answers
 * `503 {status:"draining"}` (a load balancer takes the instance out of rotation) while the
 * requests it accepted still finish; before that it answers 200 as usual.
 */
import { connect, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { functionsFor, v } from "../../src/backend/server.ts";
import schema from "../fixtures/schema.ts";
import { getJson, postJson } from "../helpers/http.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

const { action } = functionsFor(schema);

let service: TestService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

/** Resolves with everything `socket` sends until it closes. */
function readAll(socket: Socket): Promise<string> {
  return new Promise((done, fail) => {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => (text += chunk));
    socket.on("end", () => done(text));
    socket.on("error", fail);
  });
}

it("answers 503 draining once shutdown has begun, while accepted requests still finish", async () => {
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let open!: (value: string) => void;
  const gate = new Promise<string>((resolve) => (open = resolve));
  service = await startTestService({
    schema,
    modules: {
      gate: {
        hold: action({
          args: { id: v.string() },
          handler: () => {
            entered();
            return gate;
          },
        }),
      },
    },
    shutdownTimeoutMs: 60_000,
  });
  const { url, port } = service;

  expect(await getJson(`${url}/healthz`)).toMatchObject({ status: 200, body: { status: "ok" } });

  // A health check on a connection the server accepted before shutdown (as a load balancer's
  // pooled connection is): its request line is in, the rest of its headers follow later.
  const probe = connect(port, "127.0.0.1");
  await new Promise<void>((done) => probe.once("connect", () => done()));
  probe.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
  const probed = readAll(probe);

  // A call in flight keeps the server draining (not closed) until the test answers it.
  const call = postJson(`${url}/api/action`, { path: "gate:hold", args: { id: "a" } });
  await inside;
  const closing = service.close();

  probe.end("Connection: close\r\n\r\n");
  const answer = await probed;
  expect(answer).toMatch(/^HTTP\/1\.1 503 /);
  expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
    status: "draining",
    code: "DRAINING",
  });

  open("done");
  expect(await call).toMatchObject({ status: 200, body: { status: "success", value: "done" } });
  await closing;
  service = undefined;
}, 30_000);
