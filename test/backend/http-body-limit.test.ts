/**
 * The 1 MiB body limit of the function endpoints on the Hono route (the fast path has its own
 * tests in http-fast-path.test.ts): the Node server hands a request without a Host header to
 * Hono, and Hono answers 413 PAYLOAD_TOO_LARGE by declared length and while streaming.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpApp } from "../../src/backend/http/app.ts";
import { DEFAULT_MAX_BODY_BYTES } from "../../src/backend/http/body-limit.ts";
import { modules } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ schema, modules });
});
afterAll(async () => {
  await service.close();
});

/**
 * Sends `head` (request line and headers, no Host) on a raw socket and resolves with the answer
 * once the server closes the connection: HTTP/1.0 is the only way to omit Host (Node refuses
 * HTTP/1.1 requests without one).
 */
function rawRequest(port: number, head: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => (text += d));
    socket.on("error", reject);
    socket.on("close", () => {
      const split = text.indexOf("\r\n\r\n");
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1]),
        headers: text.slice(0, split).toLowerCase(),
        body: text.slice(split + 4),
      });
    });
    socket.write(head);
  });
}

describe("request body limit on the Hono route", () => {
  it("is 1 MiB by default", () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(1024 * 1024);
  });

  it("answers a host-less request declaring more than 1 MiB with 413 and Connection: close", async () => {
    const declared = DEFAULT_MAX_BODY_BYTES + 1;
    const r = await rawRequest(
      service.port,
      `POST /api/mutation HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`,
    );
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({
      status: "error",
      code: "PAYLOAD_TOO_LARGE",
      message: `Request body exceeds ${DEFAULT_MAX_BODY_BYTES} bytes`,
    });
    expect(r.headers).toContain("\r\nconnection: close");
    expect(r.headers).toContain("\r\ncontent-type: application/json");
    // Exactly the limit is read and run (here: refused as a function, not for its size).
    const body = JSON.stringify({ path: "messages:nope", args: { pad: "" } });
    const padded = body.replace('"pad":""', `"pad":"${"p".repeat(DEFAULT_MAX_BODY_BYTES - body.length)}"`);
    expect(padded.length).toBe(DEFAULT_MAX_BODY_BYTES);
    const atLimit = await rawRequest(
      service.port,
      `POST /api/query HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${padded.length}\r\n\r\n${padded}`,
    );
    expect(atLimit.status).toBe(404);
    expect(JSON.parse(atLimit.body).code).toBe("FUNCTION_NOT_FOUND");
  });

  it("stops reading a streamed body at the limit and answers 413", async () => {
    const app = createHttpApp(service.backend, { maxBodyBytes: 1000 });
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // 3000 bytes in all; a reader that stops at the limit never pulls most of them.
        if (++pulled > 10) return controller.close();
        controller.enqueue(new Uint8Array(300).fill(0x20));
      },
    });
    const res = await app.request("/api/query", {
      method: "POST",
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual({
      status: "error",
      code: "PAYLOAD_TOO_LARGE",
      message: "Request body exceeds 1000 bytes",
    });
    // 4 chunks of 300 bytes cross 1000; the stream may have queued one more ahead of the reader.
    expect(pulled).toBeLessThanOrEqual(5);
  });
});
