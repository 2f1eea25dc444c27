/**
 * Serves a backend over Node's HTTP server, for the WebSocket to share: the function API on the
 * `node:http` fast path (`fast-api.ts`), everything else through Hono's node adapter.
 */

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { requestClientAddress } from "../client-address.ts";
import {
  localMetrics,
  type MetricsOptions,
  type MetricsSource,
  publicMetricsListener,
} from "../metrics/endpoint.ts";
import type { BackendRuntime } from "../runtime.ts";
import { createHttpApp, type HttpAppOptions } from "./app.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./body-limit.ts";
import { fastApiListener } from "./fast-api.ts";
import { listenErrorOf } from "./listen-error.ts";
import { RequestDrain } from "./request-drain.ts";

export interface RunningHttpServer {
  /** A plain Node HTTP server: attach `upgrade` listeners to it. */
  server: Server;
  port: number;
  url: string;
  /** Requests being answered right now. */
  readonly inFlight: number;
  /**
   * Shutdown is coming, the server still accepts: `/healthz` answers 503 and every answer closes
   * its connection (see {@link RequestDrain.announce}).
   */
  announceClose(): void;
  /**
   * Stops accepting, lets in-flight requests finish until `deadline` (epoch ms; default now: cut
   * them at once) and closes every connection but upgraded ones. Resolves with the number cut.
   */
  close(deadline?: number): Promise<number>;
}

export interface HttpServerOptions {
  port?: number;
  hostname?: string;
  /**
   * How long an idle keep-alive connection stays open (default 65 s): longer than the idle
   * timeout of common proxies and load balancers (60 s), so they close first and never send a
   * request on a socket the server is closing. Headers get one second more.
   */
  keepAliveTimeoutMs?: number;
  /** `/metrics` on this port: served with `metrics.token`, else 404 (see `metrics/endpoint.ts`). */
  metrics?: MetricsOptions;
  /** What a scrape shows (default this process's metrics; a cluster worker's: every worker's). */
  metricsSource?: MetricsSource;
}

export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;

export async function listenHttp(
  backend: BackendRuntime,
  options: HttpAppOptions & HttpServerOptions = {},
): Promise<RunningHttpServer> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const drain = new RequestDrain();
  const app = createHttpApp(backend, {
    ...options,
    maxBodyBytes,
    draining: () => drain.closing,
    clientIp: (req, env) =>
      requestClientAddress(
        backend.env,
        (env as { incoming?: { socket?: { remoteAddress?: string } } })?.incoming?.socket?.remoteAddress,
        req.headers.get("x-forwarded-for"),
      ),
  });
  // The same options @hono/node-server's `serve` passes.
  const honoListener = getRequestListener(app.fetch, { hostname: options.hostname });
  // `/metrics` is checked after the fast path: function calls never pay for it.
  const fallback = publicMetricsListener(
    options.metrics,
    options.metricsSource ?? localMetrics,
    honoListener,
  );
  const server = createServer(
    { ServerResponse: drain.Response },
    drain.listener(fastApiListener(backend, { maxBodyBytes, cors: options.routes?.cors }, fallback)),
  );
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = server.keepAliveTimeout + 1000;
  return new Promise((resolveServer, reject) => {
    const port = options.port ?? 3000;
    const failed = (error: NodeJS.ErrnoException) => reject(listenErrorOf(error, port, options.hostname));
    server.once("error", failed);
    server.listen(port, options.hostname, () => {
      server.off("error", failed);
      const info = server.address() as AddressInfo;
      const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "localhost";
      resolveServer({
        server,
        port: info.port,
        url: `http://${host}:${info.port}`,
        get inFlight() {
          return drain.inFlight;
        },
        announceClose: () => drain.announce(),
        close: (deadline = Date.now()) => drain.close(server, deadline),
      });
    });
  });
}
