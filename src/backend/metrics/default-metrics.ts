/**
 * prom-client's default metrics (process CPU and memory, event-loop delay, heap, handles): the one
 * place they are registered. prom-client also registers `nodejs_active_{handles,requests,resources}_total`,
 * gauges named like counters, which `promtool check metrics` rejects; they are removed again, as
 * the per-type gauges beside them (`nodejs_active_handles{type}`, …) sum to the same numbers.
 */
import { collectDefaultMetrics } from "prom-client";
import { metricsRegistry } from "./registry.ts";

/** The default gauges whose names end in `_total` (a counter's suffix): not served. */
const GAUGES_NAMED_LIKE_COUNTERS = [
  "nodejs_active_handles_total",
  "nodejs_active_requests_total",
  "nodejs_active_resources_total",
];

let defaultsCollected = false;

/** Adds the default metrics to the platform's registry; once per process, when metrics are first served. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry });
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) metricsRegistry.removeSingleMetric(name);
}
