/**
 * Live sync: open WebSocket connections and their subscriptions (read from the running endpoints
 * when scraped), and how many live queries (and identity checks) each commit made run again.
 */
import { Gauge, Histogram } from "prom-client";
import { addTo, metricsRegistry, sum } from "./registry.ts";

/** What a running live-sync endpoint reports. */
export interface SyncSource {
  sockets(): number;
  subscriptions(): number;
}

const syncSources = new Set<SyncSource>();

/** Reports a live-sync endpoint's sockets and subscriptions; returns the removal. */
export function watchSync(source: SyncSource): () => void {
  return addTo(syncSources, source);
}

new Gauge({
  name: "service_auth_websocket_connections",
  help: "Open WebSocket connections",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(syncSources, (s) => s.sockets()));
  },
});

new Gauge({
  name: "service_auth_subscriptions",
  help: "Live query subscriptions of the open WebSocket connections",
  registers: [metricsRegistry],
  collect() {
    this.set(sum(syncSources, (s) => s.subscriptions()));
  },
});

const rerunsPerCommit = new Histogram({
  name: "service_auth_reruns_per_commit",
  help: "Live queries (and identity checks) a commit made run again",
  buckets: [0, 1, 2, 5, 10, 25, 50, 100, 250, 1000],
  registers: [metricsRegistry],
});

/** Re-runs a commit caused (the reactor). */
export function observeReruns(count: number): void {
  rerunsPerCommit.observe(count);
}
