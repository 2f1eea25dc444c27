/**
 * One running service: storage engine + runtime + HTTP server (+ live sync, attached by the sync
 * module). This is what `npm start` and the tests start. With `workers: N` (N ≥ 2) the calling
 * process becomes a cluster's primary (`cluster/primary.ts`) and each of N forked workers, running
 * the same program, reaches this function again and serves the whole service on the shared port.
 */
import cluster from "node:cluster";
import type { Backend as BackendApi } from "./api/backend.ts";
import { type RunningCluster, startPrimary } from "./cluster/primary.ts";
import { onStopRequest, workerWakeups } from "./cluster/worker-wakeups.ts";

import type { Migration } from "./evolution/migration.ts";
import { checkSchemaAtStart, type SchemaCheckMode, schemaCheckSetting } from "./evolution/startup-check.ts";
import type { HttpRoutes } from "./http/app.ts";
import { listenHttp, type RunningHttpServer } from "./http/node-server.ts";
import { logger } from "./logger.ts";
import { workerMetrics } from "./metrics/cluster.ts";
import {
  enableMetrics,
  listenMetrics,
  localMetrics,
  type MetricsOptions,
  type MetricsServer,
} from "./metrics/endpoint.ts";
import { watchEngine } from "./metrics/metrics.ts";
import { type BackendOptions, BackendRuntime } from "./runtime.ts";
import type { CronJobs } from "./scheduler/crons.ts";
import { type SchedulerOptions, SchedulerRunner } from "./scheduler/runner.ts";
import { withServiceSettings } from "./settings/start-settings.ts";
import type { StorageEngine } from "./storage/engine.ts";
import { openEngine } from "./storage/open.ts";
import { attachSync, type SyncOptions } from "./sync/server.ts";

/**
 * What {@link startRuntimeService} starts. `B` is what its callbacks receive: the runtime here
 * (the platform's own code and tests). `service-auth/server`'s `ServiceOptions` is this with
 * `B` = the {@link BackendApi} interface, without `attach` (`api/service.ts`): a different type,
 * hence a different name.
 */
export interface RuntimeServiceOptions<B extends BackendApi = BackendRuntime>
  extends Omit<BackendOptions, "engine"> {
  /** Storage engine; default from `databaseUrl` (SQLite file by default). */
  engine?: StorageEngine;
  databaseUrl?: string;
  /** Application HTTP routes; may be built from the started backend (e.g. for the auth middleware). */
  routes?: HttpRoutes | ((backend: B) => HttpRoutes);
  port?: number;
  hostname?: string;
  maxBodyBytes?: number;
  /** Idle keep-alive timeout of HTTP connections (default 65 s, above common proxy timeouts). */
  keepAliveTimeoutMs?: number;
  /**
   * How long `close()` lets requests and WebSocket calls in flight finish before cutting them
   * (default 10 s).
   */
  shutdownTimeoutMs?: number;
  /**
   * How long a stop asked for by a signal (or by the cluster's primary) keeps serving before it
   * refuses new connections (default {@link DEFAULT_SHUTDOWN_DELAY_MS}; the `SHUTDOWN_DELAY_MS`
   * setting of `npm start`). Meanwhile `/healthz` answers 503 and every answer closes its
   * connection, so a load balancer routes elsewhere before anything is refused. Make it longer
   * than the balancer needs to mark the instance down (interval × failures).
   */
  shutdownDelayMs?: number;
  /**
   * `env sync --auth`: generates the variables the auth integration needs when they are absent;
   * returns the names it generated.
   */
  onAuthSync?: (backend: B) => Promise<string[]>;
  /**
   * CLI `run --as <email|userId>`: a real session and JWT for that user (the auth integration's
   * `runAsUser`); `end()` deletes the session after the call.
   */
  runAs?: (backend: B, user: string) => Promise<{ token: string; end(): Promise<void> }>;
  /**
   * CLI `env set|remove|sync`: told which variables changed (names only, never values), after
   * the change, e.g. to record it in an audit trail.
   */
  onEnvChange?: (backend: B, change: { action: "set" | "remove" | "sync"; names: string[] }) => Promise<void>;
  /** Env values used when neither the process env nor the store has one. */
  envDefaults?: Record<string, string>;
  /**
   * What a start does when stored documents violate the schema (checked for every table whose
   * validator changed since its documents were last verified): `refuse` (default) throws
   * `SchemaCheckRefusal`, `warn` logs the violations and starts. Default: the `SCHEMA_CHECK` setting.
   */
  schemaCheck?: SchemaCheckMode;
  /** Online migrations by name, run with `service-auth migrate NAME` (see `defineMigration`). */
  migrations?: Record<string, Migration<any>>;
  /** Runs after storage is ready and before the server listens; throw to refuse to start. */
  prepare?: (backend: B) => Promise<void>;
  /**
   * Extra setup once the HTTP server listens. Default: the live sync server (`attachSync`) with
   * the `sync` options; pass your own to replace it.
   * @internal It gets the runtime and the HTTP server, whatever `B` is.
   */
  attach?: (
    backend: BackendRuntime,
    http: RunningHttpServer,
  ) => Promise<Attached | undefined> | Attached | undefined;
  /** Options of the default live sync server at `/api/sync`. */
  sync?: SyncOptions;
  /**
   * Where `GET /metrics` (Prometheus) is served: a port of its own (bound to 127.0.0.1 by
   * default) and/or the public port behind a bearer token. Unset: nowhere (`/metrics` answers
   * 404). `metricsSetting()` reads `METRICS_PORT`, `METRICS_HOST` and `METRICS_TOKEN`. In cluster
   * mode the primary serves the port, and every scrape covers all workers.
   */
  metrics?: MetricsOptions;
  /** The app's cron jobs (`cronJobs()`): each tick runs once across every instance and worker. */
  crons?: CronJobs;
  /**
   * The scheduler's runner in this process (runs `ctx.scheduler` jobs and crons): its limits, or
   * `false` for a process that only serves (another one runs the jobs). Default on.
   */
  scheduler?: Omit<SchedulerOptions, "crons"> | false;
  /**
   * Where the settings these options leave unsaid are read, as `service-auth start` reads them
   * (default `process.env`): `PORT`, `WORKERS`, `SHUTDOWN_DELAY_MS`, `SHUTDOWN_TIMEOUT_MS`,
   * `KEEP_ALIVE_TIMEOUT_MS`, `METRICS_PORT` / `METRICS_HOST` / `METRICS_TOKEN`, `DATABASE_URL`
   * (with its engine's settings) and `SCHEMA_CHECK`. Every problem is found at once and the start
   * refused with one `SettingsRefusal`; an option given wins over its setting. `WORKERS` above 1
   * is refused unless `workers` is given (cluster mode returns a `RunningCluster`). `false`: no
   * setting is read, the options are taken as given (a test, or a program reading its settings
   * itself, as `startApp` does).
   *
   * @example
   * ```ts
   * await startService({ ...app, settings: { PORT: "0", METRICS_TOKEN: token } }); // not process.env
   * await startService({ ...app, port: 0, settings: false }); // nothing from the environment
   * ```
   */
  settings?: Record<string, string | undefined> | false;
}

/** {@link RuntimeServiceOptions} with the number of worker processes (cluster mode). */
export interface RuntimeClusterServiceOptions<B extends BackendApi = BackendRuntime>
  extends RuntimeServiceOptions<B> {
  /**
   * Cluster mode (the `WORKERS` setting): how many worker processes serve `port` (default 1: this
   * process serves alone). With N ≥ 2, `startService` in the calling process forks N workers
   * running the same program (`process.argv`), serves nothing itself and resolves with a
   * {@link RunningCluster}; in each worker it starts the service as usual, sharing the database:
   * on PostgreSQL through the cross-instance commit log, on SQLite through a commit log in the
   * file plus wake-ups relayed by the primary. `engine` must then be left unset (SQLite) or be
   * built per worker.
   */
  workers: number;
}

/** What `attach` set up; closed before the database. */
export interface Attached {
  /** Stops; work in flight may run until `deadline` (epoch ms). */
  close(deadline?: number): Promise<void>;
}

/** A started service (see {@link startRuntimeService}). */
export interface RuntimeRunningService<B extends BackendApi = BackendRuntime> {
  backend: B;
  http: RunningHttpServer;
  url: string;
  port: number;
  /** The URL of `/metrics` on its own port, when `ServiceOptions.metrics.port` is set (not in a cluster's worker). */
  metricsUrl?: string;
  /** `ServiceOptions.shutdownDelayMs` or its default: what a stop by signal passes to {@link close}. */
  readonly shutdownDelayMs: number;
  /**
   * Graceful stop: with `delayMs`, first keeps serving that long with `/healthz` at 503 and
   * `Connection: close` on every answer; then refuses new connections, lets in-flight HTTP
   * requests and WebSocket calls finish (at most `shutdownTimeoutMs`), closes idle connections,
   * WebSockets with 1001, then the database. Later calls return the first call's promise.
   */
  close(options?: { delayMs?: number }): Promise<void>;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** Default of `ServiceOptions.shutdownDelayMs`: two or three failed checks of a balancer checking every second. */
export const DEFAULT_SHUTDOWN_DELAY_MS = 5_000;

/**
 * Opens storage, migrates the schema and serves HTTP on `port` (0 picks a free port). What the
 * options leave unsaid comes from the settings (`RuntimeServiceOptions.settings`), checked at once.
 * The platform's own start (CLI, tests, benchmarks); apps call `service-auth/server`'s
 * `startService`, the same function typed with the `Backend` interface.
 */
export function startRuntimeService(options: RuntimeServiceOptions): Promise<RuntimeRunningService>;
/** With `workers` ≥ 2: the primary gets a {@link RunningCluster}, each worker its {@link RuntimeRunningService}. */
export function startRuntimeService(
  options: RuntimeClusterServiceOptions,
): Promise<RuntimeRunningService | RunningCluster>;
export async function startRuntimeService(
  given: RuntimeServiceOptions | RuntimeClusterServiceOptions,
): Promise<RuntimeRunningService | RunningCluster> {
  const options = withServiceSettings(given);
  const workers = ("workers" in options ? options.workers : undefined) ?? 1;
  if (workers > 1 && cluster.isPrimary) {
    return startPrimary({
      workers,
      hostname: options.hostname,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
      shutdownDelayMs: options.shutdownDelayMs ?? DEFAULT_SHUTDOWN_DELAY_MS,
      metrics: options.metrics,
    });
  }
  if (workers === 1) return startOne(options, false);
  // A worker stops when its primary asks (a drain) or is gone, also when asked while starting.
  let service: RuntimeRunningService | undefined;
  let stopRequested = false;
  const stop = (s: RuntimeRunningService) =>
    void s.close({ delayMs: s.shutdownDelayMs }).finally(() => process.exit(0));
  onStopRequest(() => {
    stopRequested = true;
    if (service) stop(service);
  });
  service = await startOne(options, true);
  if (stopRequested) stop(service);
  return service;
}

async function startOne(options: RuntimeServiceOptions, inCluster: boolean): Promise<RuntimeRunningService> {
  const engine =
    options.engine ??
    openEngine(options.databaseUrl, inCluster ? { commitLog: { wakeups: workerWakeups() } } : {});
  const backend = new BackendRuntime({ ...options, engine });
  for (const [name, value] of Object.entries(options.envDefaults ?? {})) backend.env.setDefault(name, value);
  await backend.start();
  let http: RunningHttpServer | undefined;
  let attached: Attached | undefined;
  let metricsServer: MetricsServer | undefined;
  const unwatchEngine = watchEngine(engine);
  if (options.metrics) enableMetrics();
  // A worker's scrape is the primary's aggregate of every worker.
  const metricsSource = inCluster ? workerMetrics() : localMetrics;
  try {
    await checkSchemaAtStart(backend, options.schemaCheck ?? schemaCheckSetting());
    await options.prepare?.(backend);
    const routes = typeof options.routes === "function" ? options.routes(backend) : options.routes;
    http = await listenHttp(backend, {
      routes,
      port: options.port,
      hostname: options.hostname,
      maxBodyBytes: options.maxBodyBytes,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      metrics: options.metrics,
      metricsSource,
    });
    // In a cluster the primary serves the metrics port.
    const metricsPort = options.metrics?.port;
    if (metricsPort !== undefined && !inCluster)
      metricsServer = await listenMetrics({ ...options.metrics, port: metricsPort }, metricsSource);
    const attach =
      options.attach ?? ((b: BackendRuntime, h: RunningHttpServer) => attachSync(b, h, options.sync));
    attached = await attach(backend, http);
  } catch (error) {
    // A failed start (port taken, a throwing hook) must not leave the port or the database open.
    await http?.close();
    await metricsServer?.close();
    unwatchEngine();
    await backend.close();
    throw error;
  }
  const server = http;
  const runner =
    options.scheduler === false
      ? undefined
      : new SchedulerRunner(
          {
            read: (fn) => backend.read(fn),
            write: (fn) => backend.write(fn),
            runMutationClaimed: (path, args, claim) => backend.runMutationClaimed(path, args, claim),
            runAction: (path, args) => backend.runAction(path, args, { allowInternal: true }),
            followCommits: (listener) => backend.commits.on("scheduler", listener),
          },
          { ...options.scheduler, crons: options.crons?.jobs },
        );
  runner?.start();
  let closing: Promise<void> | undefined;
  return {
    backend,
    http: server,
    url: server.url,
    port: server.port,
    metricsUrl: metricsServer?.url,
    shutdownDelayMs: options.shutdownDelayMs ?? DEFAULT_SHUTDOWN_DELAY_MS,
    close: ({ delayMs = 0 } = {}) =>
      (closing ??= (async () => {
        if (delayMs > 0) {
          server.announceClose();
          logger.info("shutting down: /healthz answers 503, still serving", { delayMs });
          await new Promise((done) => setTimeout(done, delayMs));
        }
        const timeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
        const deadline = Date.now() + timeoutMs;
        const inFlight = server.inFlight;
        // All at once: WebSocket calls finish while HTTP requests and running jobs do; none takes new work.
        const stopped = Promise.all([
          attached?.close(deadline),
          server.close(deadline),
          runner?.close(deadline),
        ]);
        logger.info("shutting down: new connections refused", { httpRequestsInFlight: inFlight, timeoutMs });
        const [, cut] = await stopped;
        if (cut > 0) logger.warn("shutdown timeout passed: HTTP requests cut", { cut });
        await metricsServer?.close();
        unwatchEngine();
        await backend.close();
        logger.info("service stopped");
      })()),
  };
}
