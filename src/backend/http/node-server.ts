/** Serves a backend over Node's HTTP server (Hono's node adapter), for the WebSocket to share. */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { createHttpApp, type HttpAppOptions } from "./app.ts";
import type { Backend } from "../runtime.ts";

export interface RunningHttpServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

export async function listenHttp(
  backend: Backend,
  options: HttpAppOptions & { port?: number; hostname?: string } = {},
): Promise<RunningHttpServer> {
  const app = createHttpApp(backend, {
    ...options,
    clientIp: (_req, env) => (env as { incoming?: { socket?: { remoteAddress?: string } } })?.incoming?.socket?.remoteAddress,
  });
  return new Promise((resolveServer, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port ?? 3000, hostname: options.hostname }, (info: AddressInfo) => {
      const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "localhost";
      resolveServer({
        server: server as Server,
        port: info.port,
        url: `http://${host}:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            (server as Server).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    }) as Server;
    server.once("error", reject);
  });
}
