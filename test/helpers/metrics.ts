/** A counter of this process's metrics registry, read in tests. */
import { metricsRegistry } from "../../src/backend/metrics/metrics.ts";

/** The counter `name`'s values by the label `label`, summed over this process's instances. */
export async function counterBy(name: string, label: string): Promise<Record<string, number>> {
  const metric = metricsRegistry.getSingleMetric(name);
  const counts: Record<string, number> = {};
  for (const { labels, value } of (await metric?.get())?.values ?? []) counts[String(labels[label])] = value;
  return counts;
}
