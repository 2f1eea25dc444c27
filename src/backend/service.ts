/**
 * One running service: storage engine + runtime + HTTP server (+ live sync, attached by the sync
 * module). This is what `npm start` and the tests start.
 */

import type { HttpRoutes } from "./http/app.ts";
import { listenHttp, type RunningHttpServer } from "./http/node-server.ts";
import { logger } from "./logger.ts";
import { Backend, type BackendOptions } from "./runtime.ts";
import type { StorageEngine } from "./storage/engine.ts";
import { openEngine } from "./storage/open.ts";
import { attachSync, type SyncOptions } from "./sync/server.ts";

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
  /**
   * CLI `run --as <email|userId>`: a real session and JWT for that user (the auth integration's
   * `runAsUser`); `end()` deletes the session after the call.
   */
  runAs?: (backend: Backend, user: string) => Promise<{ token: string; end(): Promise<void> }>;
  /** Env values used when neither the process env nor the store has one. */
  envDefaults?: Record<string, string>;
  /** Runs after storage is ready and before the server listens; throw to refuse to start. */
  prepare?: (backend: Backend) => Promise<void>;
  /**
   * Extra setup once the HTTP server listens. Default: the live sync server (`attachSync`) with
   * the `sync` options; pass your own to replace it.
   */
  attach?: (
    backend: Backend,
    http: RunningHttpServer,
  ) => Promise<{ close(): Promise<void> } | void> | { close(): Promise<void> } | void;
  /** Options of the default live sync server at `/api/sync`. */
  sync?: SyncOptions;
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
  for (const [name, value] of Object.entries(options.envDefaults ?? {})) backend.env.setDefault(name, value);
  await backend.start();
  let http: RunningHttpServer | undefined;
  let attached: { close(): Promise<void> } | void;
  try {
    await options.prepare?.(backend);
    const routes = typeof options.routes === "function" ? options.routes(backend) : options.routes;
    http = await listenHttp(backend, {
      routes,
      port: options.port,
      hostname: options.hostname,
      maxBodyBytes: options.maxBodyBytes,
    });
    const attach = options.attach ?? ((b: Backend, h: RunningHttpServer) => attachSync(b, h, options.sync));
    attached = await attach(backend, http);
  } catch (error) {
    // A failed start (port taken, a throwing hook) must not leave the port or the database open.
    await http?.close();
    await backend.close();
    throw error;
  }
  const server = http;
  let closing: Promise<void> | undefined;
  return {
    backend,
    http: server,
    url: server.url,
    port: server.port,
    close: () =>
      (closing ??= (async () => {
        await attached?.close();
        await server.close();
        await backend.close();
        logger.info("service stopped");
      })()),
  };
}
