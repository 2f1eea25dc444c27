/**
 * One scrape for a whole cluster (`WORKERS=N`): prom-client's `AggregatorRegistry` in the primary
 * asks every worker for its registry over IPC and sums them (gauges marked otherwise, e.g. the
 * commit lag, take the largest). The primary serves `METRICS_PORT` itself; a worker asked for
 * `/metrics` on the public port relays the request to the primary, so any worker answers for all.
 */
import cluster from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import { TAG } from "../cluster/messages.ts";
import type { MetricsSource } from "./endpoint.ts";
import { metricsRegistry } from "./metrics.ts";

/** Worker → primary: the cluster's metrics, please. */
interface MetricsRequest {
  [TAG]: "metrics-request";
  id: number;
}

/** Primary → worker: the answer to request `id`. */
interface MetricsReply {
  [TAG]: "metrics-reply";
  id: number;
  text?: string;
  error?: string;
}

function isMetricsRequest(message: unknown): message is MetricsRequest {
  const m = message as Partial<MetricsRequest> | null;
  return typeof m === "object" && m !== null && m[TAG] === "metrics-request" && Number.isSafeInteger(m.id);
}

function isMetricsReply(message: unknown): message is MetricsReply {
  const m = message as Partial<MetricsReply> | null;
  return typeof m === "object" && m !== null && m[TAG] === "metrics-reply" && Number.isSafeInteger(m.id);
}

/** How long a worker waits for the primary's aggregate (prom-client gives workers 5 s). */
const RELAY_TIMEOUT_MS = 10_000;

/**
 * In the primary: the aggregate of every worker's metrics, also answering workers' relayed
 * requests. Returns the source and the removal of the relay.
 */
export function primaryMetrics(): { source: MetricsSource; stop(): void } {
  const aggregator = new AggregatorRegistry();
  const source: MetricsSource = () => aggregator.clusterMetrics();
  const relay = (worker: import("node:cluster").Worker, message: unknown) => {
    if (!isMetricsRequest(message)) return;
    const reply = (body: Omit<MetricsReply, typeof TAG | "id">) => {
      if (worker.isConnected())
        worker.send({ [TAG]: "metrics-reply", id: message.id, ...body }, undefined, () => {});
    };
    source().then(
      (text) => reply({ text }),
      (error) => reply({ error: String(error) }),
    );
  };
  cluster.on("message", relay);
  return { source, stop: () => cluster.off("message", relay) };
}

let workerSource: MetricsSource | undefined;

/**
 * In a worker: answers the primary's collection with the platform's registry, and returns the
 * source a worker's `/metrics` uses (the primary's aggregate).
 */
export function workerMetrics(): MetricsSource {
  if (workerSource) return workerSource;
  // Constructing it installs prom-client's worker side: it answers the primary's requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([metricsRegistry]);
  let next = 0;
  const waiting = new Map<number, { resolve(text: string): void; reject(error: Error): void }>();
  process.on("message", (message: unknown) => {
    if (!isMetricsReply(message)) return;
    const pending = waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.text !== undefined) pending.resolve(message.text);
    else pending.reject(new Error(message.error ?? "no metrics from the primary"));
  });
  workerSource = () =>
    new Promise<string>((resolve, reject) => {
      if (!process.connected || !process.send) return reject(new Error("the cluster's primary is gone"));
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error("the cluster's primary did not answer"));
      }, RELAY_TIMEOUT_MS);
      waiting.set(id, {
        resolve: (text) => {
          clearTimeout(timer);
          resolve(text);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      const request: MetricsRequest = { [TAG]: "metrics-request", id };
      process.send(request, undefined, undefined, (error) => {
        if (error) waiting.get(id)?.reject(error);
      });
    });
  return workerSource;
}
