/**
 * The registry `/metrics` shows (the platform's own; prom-client's global one stays the app's), and
 * the sets of sources that gauges read when scraped (live sockets, pool sizes, commit lag: numbers
 * that exist anyway are read then, not tracked per request).
 */
import { Registry } from "prom-client";

/** The registry `/metrics` shows; every subject file (see `metrics.ts`) registers into it. */
export const metricsRegistry = new Registry();

/** Adds `source` to every scrape until the returned function is called. */
export function addTo<T>(set: Set<T>, source: T): () => void {
  set.add(source);
  return () => set.delete(source);
}

/** The sum of `read` over the sources (a missing part counts 0). */
export function sum<T>(set: Set<T>, read: (source: T) => number | undefined): number {
  let total = 0;
  for (const source of set) total += read(source) ?? 0;
  return total;
}
