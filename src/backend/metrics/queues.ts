/** Queues of work waiting for its turn (e.g. password hashes waiting for a thread), read when scraped. */
import { Gauge } from "prom-client";
import { metricsRegistry } from "./registry.ts";

const queueSources = new Map<string, () => number>();

new Gauge({
  name: "service_auth_queue_length",
  help: "Work waiting for its turn, by queue (scrypt: password hashes waiting for a thread)",
  labelNames: ["queue"] as const,
  registers: [metricsRegistry],
  collect() {
    for (const [queue, length] of queueSources) this.set({ queue }, length());
  },
});

/**
 * Reports the length of a queue (e.g. `scrypt`, the password hashes waiting for a thread) on every
 * scrape; the last registration of a name wins.
 *
 * @example
 * ```ts
 * import { watchQueue } from "service-auth/server";
 *
 * const waiting: unknown[] = [];
 * // Each scrape of /metrics reports the current length of the password-hash queue.
 * watchQueue("scrypt", () => waiting.length);
 * ```
 */
export function watchQueue(queue: "scrypt", length: () => number): void {
  queueSources.set(queue, length);
}
