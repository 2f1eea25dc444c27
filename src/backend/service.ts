/**
 * One running service: storage engine + runtime + HTTP server (+ live sync, attached by the sync
 * module). This is what `npm start` and the tests start.
 */
import { listenHttp, type RunningHttpServer } from "./http/node-server.ts";
import type { HttpRoutes } from "./http/app.ts";
import { logger } from "./logger.ts";
import { Backend, type BackendOptions } from "./runtime.ts";
import { openEngine } from "./storage/open.ts";
import type { StorageEngine } from "./storage/engine.ts";

export interface ServiceOptions extends Omit<BackendOptions, "engine"> {
  /** Storage engine; default from `databaseUrl` (SQLite file by default). */
  engine?: StorageEngine;
  databaseUrl?: string;
  /** Application HTTP routes; may be built from the started backend (e.g. for the auth middleware). */
  routes?: HttpRoutes | ((backend: Backend) => HttpRoutes);
  port?: number;
  hostname?: string;
  maxBodyBytes?: number;
  /**
   * `env sync --auth`: generates the variables the auth integration needs when they are absent;
   * returns the names it generated.
   */
  onAuthSync?: (backend: Backend) => Promise<string[]>;
  /** Extra setup once the HTTP server listens (the live sync server attaches here). */
  attach?: (backend: Backend, http: RunningHttpServer) => Promise<{ close(): Promise<void> } | void>;
}

export interface RunningService {
  backend: Backend;
  http: RunningHttpServer;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Opens storage, migrates the schema and serves HTTP on `port` (0 picks a free port). */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const engine = options.engine ?? openEngine(options.databaseUrl);
  const backend = new Backend({ ...options, engine });
  await backend.start();
  const routes = typeof options.routes === "function" ? options.routes(backend) : options.routes;
  const http = await listenHttp(backend, {
    routes,
    port: options.port,
    hostname: options.hostname,
    maxBodyBytes: options.maxBodyBytes,
  });
  const attached = options.attach ? await options.attach(backend, http) : undefined;
  let closing: Promise<void> | undefined;
  return {
    backend,
    http,
    url: http.url,
    port: http.port,
    close: () =>
      (closing ??= (async () => {
        await attached?.close();
        await http.close();
        await backend.close();
        logger.info("service stopped");
      })()),
  };
}
