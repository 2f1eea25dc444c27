/** Timing primitives: monotonic nanosecond clock, per-call sampling, percentiles, formatting. */

/** Monotonic time in nanoseconds. */
export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/**
 * Calls `fn(i)` `iterations` times one after another (each awaited) and returns each call's
 * duration in nanoseconds. Run a warm-up first so the JIT and caches settle.
 */
export async function sampleAsync(
  iterations: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number[]> {
  const samples = new Array<number>(iterations);
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint();
    await fn(i);
    samples[i] = Number(process.hrtime.bigint() - start);
  }
  return samples;
}

/** Nearest-rank percentile (`p` in 0..100) of `values`; sorts a copy. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export function summarize(samplesNs: readonly number[]): LatencySummary {
  const sorted = [...samplesNs].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  const mean = sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1);
  return { n: sorted.length, p50: at(50), p99: at(99), mean };
}

/** `1234` → "1.2 µs"; picks ns, µs, ms or s. */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return "n/a";
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(2)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

/** `12345.6` → "12,346". */
export function formatCount(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** `0.734` → "73.4%". */
export function formatRatio(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}

/**
 * Runs every case once per round, rotating which goes first, so slow drifts of a shared machine
 * hit all cases alike. Returns each case's per-round results (index = round).
 */
export async function interleave<T>(
  rounds: number,
  cases: Record<string, (round: number) => Promise<T>>,
): Promise<Record<string, T[]>> {
  const names = Object.keys(cases);
  const out: Record<string, T[]> = Object.fromEntries(names.map((n) => [n, [] as T[]]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      out[name][round] = await cases[name](round);
    }
  }
  return out;
}
