/**
 * The live sync server: WebSockets at `/api/sync` on the HTTP server's own port. One reactor
 * keeps every shared query and every connection's identity current with the commits; one
 * sweeping interval enforces timeouts and expiries for all connections.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { CloseCode } from "../../protocol/close-codes.ts";
import { rateLimitKey, requestClientAddress } from "../client-address.ts";
import type { RunningHttpServer } from "../http/node-server.ts";
import { logger } from "../logger.ts";
import { watchSync } from "../metrics/metrics.ts";
import type { BackendRuntime } from "../runtime.ts";
import { tick } from "../ticker.ts";
import { SyncBudget } from "./budget.ts";
import { Connection, type ConnectionServer } from "./connection.ts";
import { resolveLimits, type SyncLimitOptions, type SyncLimits } from "./limits.ts";
import { Presence, type PresenceOptions } from "./presence.ts";
import { QueryGroups } from "./query-group.ts";
import { Reactor } from "./reactor.ts";

export type { SyncLimitOptions, SyncLimits };

export interface SyncOptions extends SyncLimitOptions {
  /** URL path of the endpoint (default `/api/sync`). */
  path?: string;
  /** How often timeouts and expiries are checked (default 1000 ms). */
  sweepIntervalMs?: number;
  /** Largest number of query/identity executions at once (default 8). */
  concurrency?: number;
  /** How presence rows (`ctx.connections`) are written and instances beat (presence.ts). */
  presence?: PresenceOptions;
}

/** A running sync endpoint. */
export interface SyncServer {
  readonly connections: ReadonlySet<Connection>;
  readonly reactor: Reactor;
  readonly groups: QueryGroups;
  /** This instance's rows of live connections, and the disconnect requests it acts on. */
  readonly presence: Presence;
  /**
   * Refuses new connections, closes each connection with 1001 once its calls in flight have
   * answered (cut at `deadline`, epoch ms; default now) and detaches from the HTTP server.
   */
  close(deadline?: number): Promise<void>;
}

/** How long a client gets to answer our close frame before its socket is cut. */
const CLOSE_HANDSHAKE_MS = 1000;

/**
 * Attaches the sync endpoint to a running HTTP server; usable as `startService({ attach })`.
 * `startService` attaches it by default.
 */
export function attachSync(
  backend: BackendRuntime,
  http: RunningHttpServer,
  options: SyncOptions = {},
): SyncServer {
  const path = options.path ?? "/api/sync";
  const limits = resolveLimits(options);
  const budget = new SyncBudget(limits);
  const reactor = new Reactor(backend.catalog, backend.commits, { concurrency: options.concurrency });
  const groups = new QueryGroups(backend, reactor);
  const connections = new Set<Connection>();
  const presence = new Presence(backend, connections, options.presence);
  let allClosed: (() => void) | undefined;
  const server: ConnectionServer = {
    backend,
    authenticate: (token, meta) => backend.authenticate(token, meta),
    catchUp: () => backend.commits.confirm(backend.commits.stamp()),
    reactor,
    groups,
    limits,
    budget,
    closed: (c) => {
      connections.delete(c);
      presence.forget(c);
      budget.leave(c.address);
      if (connections.size === 0) allClosed?.();
    },
  };
  const unsubscribe = [
    backend.commits.on("live-queries", (commit) => reactor.handleCommit(commit)),
    backend.commits.on("presence", (commit) => presence.actOnDisconnects(commit)),
  ];
  presence.start().catch((error) => logger.warn("presence: start failed", { error: String(error) }));
  const unwatchMetrics = watchSync({
    sockets: () => connections.size,
    subscriptions: () => {
      let total = 0;
      for (const c of connections) total += c.subscriptionCount;
      return total;
    },
  });
  // The verifier follows the env store (e.g. a new `JWKS` after key rotation), but no identity's
  // read set covers it: re-check every live identity so tokens of retired keys end at once. In
  // the `recheck` phase, after `reconfigure` rebuilt the verifier the re-checks use.
  const unwatchEnv = backend.onEnvChange("live-identities", () => {
    for (const c of connections) c.recheckIdentity();
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: limits.maxMessageBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    if ((q < 0 ? url : url.slice(0, q)) !== path) {
      // Leave other paths to other upgrade handlers; refuse them when there are none.
      if (http.server.listenerCount("upgrade") === 1) {
        // An upgraded socket has no error listener left: without one, a client resetting the
        // connection would throw an uncaught ECONNRESET and end the process.
        socket.on("error", () => socket.destroy());
        socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      }
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (closing) return ws.close(CloseCode.GOING_AWAY, "server shutting down");
      const forwarded = req.headers["x-forwarded-for"];
      const meta = {
        clientIp: requestClientAddress(
          backend.env,
          req.socket.remoteAddress,
          Array.isArray(forwarded) ? forwarded.join(", ") : forwarded,
        ),
        userAgent: req.headers["user-agent"],
      };
      // Counted like rate limits: an IPv6 client holds a whole /64.
      const address = rateLimitKey(meta.clientIp ?? "");
      if (!budget.admit(address)) {
        // Accepted, then closed with a reason the client can read (an HTTP refusal shows as 1006).
        ws.on("error", () => {});
        ws.close(CloseCode.TOO_MANY_CONNECTIONS, "too many connections from this address");
        return;
      }
      connections.add(new Connection(server, ws, meta, address));
    });
  };
  http.server.on("upgrade", onUpgrade);

  const sweep = tick("sync_sweep", options.sweepIntervalMs ?? 1000, () => {
    const now = Date.now();
    let queued = 0;
    for (const c of connections) {
      c.sweep(now);
      queued += c.socket.bufferedAmount;
    }
    if (queued > limits.maxTotalBufferedBytes)
      closeLargestQueues(connections, queued - limits.maxTotalBufferedBytes);
  });

  let closing: Promise<void> | undefined;
  return {
    connections,
    reactor,
    groups,
    presence,
    close: (deadline = Date.now()) =>
      (closing ??= (async () => {
        http.server.off("upgrade", onUpgrade);
        const sockets = [...connections].map((c) => c.socket);
        // A connection leaves the set when it sends its 1001, after its last result.
        const answered = new Promise<void>((done) => (allClosed = done));
        for (const c of [...connections]) c.closeWhenIdle("server shutting down");
        if (connections.size === 0) allClosed?.();
        await untilOrAt(answered, deadline);
        for (const c of [...connections]) c.close(CloseCode.GOING_AWAY, "server shutting down");
        // Give clients a moment to answer the close frame, then cut the rest.
        const gone = sockets.map((ws) =>
          ws.readyState === 3 ? null : new Promise<void>((done) => ws.once("close", () => done())),
        );
        await untilOrAt(Promise.all(gone), Date.now() + CLOSE_HANDSHAKE_MS);
        for (const ws of sockets) if (ws.readyState !== 3) ws.terminate();
        sweep.stop();
        await presence.stop();
        for (const off of unsubscribe) off();
        unwatchEnv();
        unwatchMetrics();
        await new Promise<void>((done) => wss.close(() => done()));
        logger.info("sync server stopped");
      })()),
  };
}

/** Resolves when `promise` settles or at `deadline` (epoch ms), whichever comes first. */
async function untilOrAt(promise: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise((done) => (timer = setTimeout(done, Math.max(0, deadline - Date.now())))),
  ]);
  clearTimeout(timer);
}

/**
 * The output queued for all clients exceeds the server-wide budget by `excess` bytes: closes the
 * connections with the most unread output until that much is freed.
 */
function closeLargestQueues(connections: ReadonlySet<Connection>, excess: number): void {
  const byQueue = [...connections].sort((a, b) => b.socket.bufferedAmount - a.socket.bufferedAmount);
  let freed = 0;
  for (const c of byQueue) {
    if (freed >= excess) break;
    freed += c.socket.bufferedAmount;
    c.close(CloseCode.SLOW_CONSUMER, "server output budget exceeded; client is not reading");
  }
}
