/**
 * The primary process of cluster mode (`WORKERS=N`): forks the workers, serves nothing itself.
 * node:cluster shares the workers' listening port and hands out incoming connections round-robin
 * (HTTP requests and WebSocket upgrades alike: a socket lives in the worker that accepted it).
 * The primary relays commit wake-ups between workers (SQLite), replaces a worker that dies
 * (a bounded number of times), and drains every worker when it is stopped.
 */
import cluster, { type Worker } from "node:cluster";
import { logger } from "../logger.ts";
import { primaryMetrics } from "../metrics/cluster.ts";
import { listenMetrics, type MetricsOptions, type MetricsServer } from "../metrics/endpoint.ts";
import { isClusterMessage, STOP, TAG } from "./messages.ts";

export interface ClusterOptions {
  /** Number of worker processes (≥ 2). */
  workers: number;
  /** Host name for the URL reported (the workers listen where the service options say). */
  hostname?: string;
  /** How long a stopping worker may drain; the primary SIGKILLs it 5 s after that. */
  shutdownTimeoutMs: number;
  /** How long a stopping worker keeps serving first (`ServiceOptions.shutdownDelayMs`). */
  shutdownDelayMs: number;
  /** Replacements allowed within {@link restartWindowMs} before the primary gives up (default 10). */
  maxRestarts?: number;
  /** Window of {@link maxRestarts}, ms (default 60,000). */
  restartWindowMs?: number;
  /**
   * Metrics (`ServiceOptions.metrics`): the primary serves `port` with every worker's metrics
   * summed, and answers the workers' relayed scrapes of the public port.
   */
  metrics?: MetricsOptions;
}

/**
 * A running cluster, as seen from its primary.
 *
 * @example
 * ```ts
 * import { type RunningCluster, startService } from "service-auth/server";
 *
 * const service = await startService({ ...app, workers: 4 });
 * if ("role" in service) {
 *   const cluster: RunningCluster = service;
 *   console.log(`${cluster.url}: ${cluster.workerPids().length} workers`);
 * }
 * ```
 */
export interface RunningCluster {
  readonly role: "primary";
  /** The shared port's URL. */
  url: string;
  port: number;
  /** The URL of `/metrics` on its own port (every worker's metrics), when `metrics.port` is set. */
  metricsUrl?: string;
  /** Process ids of the workers alive now. */
  workerPids(): number[];
  /** Resolves when the cluster has stopped (after `close()`, or after giving up on restarts). */
  readonly stopped: Promise<void>;
  /** Asks every worker to stop gracefully and waits until all have exited. */
  close(): Promise<void>;
}

/** Extra time a worker gets beyond the shutdown timeout before it is killed. */
const KILL_GRACE_MS = 5_000;

/** Forks one worker; `listening` resolves with its port once it listens, rejects if it exits first. */
function fork(): { worker: Worker; listening: Promise<number> } {
  const worker = cluster.fork();
  const listening = new Promise<number>((resolve, reject) => {
    const onListening = (address: { port: number }) => {
      worker.off("exit", onExit);
      resolve(address.port);
    };
    const onExit = (code: number | null, signal: string | null) => {
      worker.off("listening", onListening);
      reject(
        new Error(`worker ${worker.process.pid} exited (${signal ?? `code ${code}`}) before it listened`),
      );
    };
    worker.once("listening", onListening);
    worker.once("exit", onExit);
  });
  listening.catch(() => {});
  return { worker, listening };
}

function exited(worker: Worker): Promise<void> {
  if (worker.isDead()) return Promise.resolve();
  return new Promise((resolve) => worker.once("exit", () => resolve()));
}

/**
 * Starts the workers one after another (the first migrates the database and runs the `prepare`
 * hook alone; the next ones find its work done) and resolves once all of them listen. A worker
 * that dies during the start fails it: the others are stopped and the error is thrown.
 */
export async function startPrimary(options: ClusterOptions): Promise<RunningCluster> {
  if (!cluster.isPrimary) throw new Error("startPrimary runs in the primary process only");
  const workers = new Set<Worker>();
  let stopping = false;
  let closing: Promise<void> | undefined;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  const restarts: number[] = [];
  const maxRestarts = options.maxRestarts ?? 10;
  const windowMs = options.restartWindowMs ?? 60_000;

  const relay = (from: Worker, message: unknown) => {
    if (!isClusterMessage(message) || message[TAG] !== "commit") return;
    for (const worker of workers) {
      if (worker !== from && worker.isConnected()) worker.send(message, undefined, () => {});
    }
  };
  cluster.on("message", relay);
  const metrics = options.metrics ? primaryMetrics() : undefined;
  let metricsServer: MetricsServer | undefined;

  const close = () =>
    (closing ??= (async () => {
      stopping = true;
      await metricsServer?.close();
      metrics?.stop();
      const all = [...workers];
      for (const worker of all) if (worker.isConnected()) worker.send(STOP, undefined, () => {});
      const deadline = setTimeout(
        () => {
          for (const worker of all) if (!worker.isDead()) worker.process.kill("SIGKILL");
        },
        options.shutdownDelayMs + options.shutdownTimeoutMs + KILL_GRACE_MS,
      );
      await Promise.all(all.map(exited));
      clearTimeout(deadline);
      cluster.off("message", relay);
      cluster.off("exit", onExit);
      resolveStopped();
    })());

  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    workers.delete(worker);
    if (stopping) return;
    const pid = worker.process.pid;
    logger.error("cluster worker exited; starting a replacement", { pid, code, signal });
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && restarts[0] <= now - windowMs) restarts.shift();
    if (restarts.length > maxRestarts) {
      logger.error("cluster workers keep exiting: giving up and stopping the cluster", {
        restarts: restarts.length,
        windowMs,
      });
      process.exitCode = 1;
      void close();
      return;
    }
    workers.add(fork().worker);
  };

  let port = 0;
  try {
    for (let i = 0; i < options.workers; i++) {
      const { worker, listening } = fork();
      // Tracked before it listens, so a failed start stops it too.
      workers.add(worker);
      port = await listening;
    }
    const metricsPort = options.metrics?.port;
    if (metrics && metricsPort !== undefined)
      metricsServer = await listenMetrics({ ...options.metrics, port: metricsPort }, metrics.source);
  } catch (error) {
    await close();
    throw error;
  }
  cluster.on("exit", onExit);
  const host = options.hostname && options.hostname !== "0.0.0.0" ? options.hostname : "localhost";
  logger.info("cluster started", { workers: options.workers, port });
  return {
    role: "primary",
    url: `http://${host}:${port}`,
    port,
    metricsUrl: metricsServer?.url,
    workerPids: () =>
      [...workers].flatMap((w) => (w.isDead() || w.process.pid === undefined ? [] : [w.process.pid])),
    stopped,
    close,
  };
}
