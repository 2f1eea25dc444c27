/**
 * Serves a backend over Node's HTTP server, for the WebSocket to share: the function API on the
 * `node:http` fast path (`fast-api.ts`), everything else through Hono's node adapter.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { requestClientAddress } from "../client-address.ts";
import type { Backend } from "../runtime.ts";
import { createHttpApp, type HttpAppOptions } from "./app.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./body-limit.ts";
import { fastApiListener } from "./fast-api.ts";

export interface RunningHttpServer {
  /** A plain Node HTTP server: attach `upgrade` listeners to it. */
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function listenHttp(
  backend: Backend,
  options: HttpAppOptions & { port?: number; hostname?: string } = {},
): Promise<RunningHttpServer> {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = createHttpApp(backend, {
    ...options,
    maxBodyBytes,
    clientIp: (req, env) =>
      requestClientAddress(
        backend.env,
        (env as { incoming?: { socket?: { remoteAddress?: string } } })?.incoming?.socket?.remoteAddress,
        req.headers.get("x-forwarded-for"),
      ),
  });
  // The same options @hono/node-server's `serve` passes.
  const honoListener = getRequestListener(app.fetch, { hostname: options.hostname });
  const server = createServer(
    fastApiListener(backend, { maxBodyBytes, cors: options.routes?.cors }, honoListener),
  );
  return new Promise((resolveServer, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, options.hostname, () => {
      server.off("error", reject);
      const info = server.address() as AddressInfo;
      const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "localhost";
      resolveServer({
        server,
        port: info.port,
        url: `http://${host}:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}
