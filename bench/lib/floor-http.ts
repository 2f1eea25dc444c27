/**
 * The HTTP side the floors share (`bench/fixtures/raw-*.ts`): a plain `node:http` server on
 * 127.0.0.1 that collects a JSON body and answers JSON with our headers, as cheaply as `node:http`
 * allows, so that a floor's figure is its database work plus the least HTTP can cost. Callbacks,
 * not promises: each floor adds only what its own work needs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { announceReady, exitOnSignal } from "./spawn.ts";

/** Bodies larger than this end the request (our servers refuse them too). */
const MAX_BODY = 1024 * 1024;

/** The headers our `/api/*` answers carry. */
const HEADERS = {
  "content-type": "application/json",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/**
 * With `BENCH_COALESCE=1` answers are written together once per turn of the event loop (at most 16
 * at a time), as our function endpoints write theirs (`src/backend/http/coalesced-writes.ts`):
 * the floor for a server that writes that way.
 */
const coalesce = process.env.BENCH_COALESCE === "1";
const waiting: [ServerResponse, number, string][] = [];

function writeWaiting(): void {
  const batch = waiting.splice(0);
  for (const [res, status, payload] of batch) write(res, status, payload);
}

function write(res: ServerResponse, status: number, payload: string): void {
  res.writeHead(status, { ...HEADERS, "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

/** Answers `payload` (JSON text) with our headers. */
export function answerJson(res: ServerResponse, status: number, payload: string): void {
  if (!coalesce) {
    write(res, status, payload);
    return;
  }
  waiting.push([res, status, payload]);
  if (waiting.length === 16) writeWaiting();
  else if (waiting.length === 1) setImmediate(writeWaiting);
}

/** Our error answer with `code`. */
export function answerError(res: ServerResponse, status: number, code: string): void {
  answerJson(res, status, `{"status":"error","code":"${code}"}`);
}

/** No value: the body was not JSON. */
export const NOT_JSON = Symbol("not JSON");

/**
 * Collects `req`'s body (a body over the limit ends the request) and passes it on parsed as JSON,
 * or {@link NOT_JSON}.
 */
export function collectJsonBody(req: IncomingMessage, done: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(chunk);
  });
  req.on("end", () => {
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = NOT_JSON;
    }
    done(body);
  });
}

/**
 * Serves `POST <path>` with its parsed JSON body (other requests: 404; a body that is not JSON:
 * 400 `BAD_REQUEST`) on a free port, announces it, and closes on a signal after `close`.
 */
export function serveJsonPost(
  path: string,
  handle: (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void,
  close: () => Promise<void> = async () => {},
): void {
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== path) {
      res.writeHead(404).end();
      return;
    }
    collectJsonBody(req, (body) => {
      if (typeof body !== "object" || body === null) answerError(res, 400, "BAD_REQUEST");
      else handle(body as Record<string, unknown>, req, res);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    announceReady(typeof address === "object" && address ? address.port : 0);
  });
  exitOnSignal(
    () =>
      new Promise<void>((done) => {
        server.close(() => void close().finally(done));
        server.closeAllConnections();
      }),
  );
}
