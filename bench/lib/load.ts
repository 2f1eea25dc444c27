/**
 * HTTP load generator (autocannon) for local servers. It runs in the benchmark process while the
 * server under test runs in its own process, so on a 2-core machine each gets a core.
 */
import autocannon, { type AutocannonRequest } from "autocannon";

export interface LoadOptions {
  /** Target URL; must be on 127.0.0.1 or localhost. */
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  /** Request bodies; several are sent in turn (e.g. different keys), one is sent every time. */
  bodies?: string[];
  connections?: number;
  pipelining?: number;
  durationSec?: number;
}

export interface LoadResult {
  /** Completed requests divided by the run's wall time. */
  requestsPerSec: number;
  /** Latency percentiles as autocannon records them: whole milliseconds. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  completed: number;
  /** Bytes received per completed request (status line, headers and body). */
  bytesPerResponse: number;
}

/** Default settings shared by every HTTP comparison, so compared runs differ only in the target. */
export const LOAD_DEFAULTS = { connections: 10, pipelining: 1, durationSec: 3 } as const;

function assertLocal(url: string): void {
  const host = new URL(url).hostname;
  if (host !== "127.0.0.1" && host !== "localhost")
    throw new Error(`Refusing to load ${url}: benchmarks only target 127.0.0.1`);
}

/** Runs one load test; throws when any request failed or got a non-2xx status (a broken target is not a fast one). */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  assertLocal(options.url);
  const headers = { ...(options.bodies ? { "content-type": "application/json" } : {}), ...options.headers };
  const requests: AutocannonRequest[] | undefined = options.bodies?.map((body) => ({ body }));
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "GET",
    headers,
    requests,
    connections: options.connections ?? LOAD_DEFAULTS.connections,
    pipelining: options.pipelining ?? LOAD_DEFAULTS.pipelining,
    duration: options.durationSec ?? LOAD_DEFAULTS.durationSec,
  });
  if (result.errors || result.timeouts || result.non2xx || !result.requests.total) {
    throw new Error(
      `Load test of ${options.url} failed: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx responses`,
    );
  }
  return {
    requestsPerSec: (result.requests.total ?? 0) / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    completed: result.requests.total ?? 0,
    bytesPerResponse: (result.throughput.total ?? 0) / (result.requests.total ?? 1),
  };
}
