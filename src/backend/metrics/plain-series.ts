/**
 * Counters and histograms for the hot path, kept in plain numbers and shown to prom-client only
 * when scraped. prom-client's own label children hash their label set into a new string and
 * validate it on every `inc`/`observe`; a series here is an object found once per label set, whose
 * `inc`/`observe` only adds to numbers. They register in a prom-client `Registry` as metrics (the
 * `get()` it calls), so the text format and the cluster aggregation are prom-client's.
 */
import type { Registry } from "prom-client";

type Labels = Readonly<Record<string, string>>;

/** One value as prom-client's `get()` describes it. */
interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** What a prom-client registry reads from a metric. */
interface MetricData {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  values: MetricValue[];
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(): void {
    this.value++;
  }
}

export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot holds those above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Array(bounds.length + 1).fill(0);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

/** A counter whose series are created once per label set (callers keep them). */
export class PlainCounter {
  readonly type = "counter";
  readonly aggregator = "sum";
  private readonly all: CounterSeries[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    // prom-client reads any object with `name` and `get()`; its type asks for its own classes.
    registry.registerMetric(this as never);
  }
  series(labels: Labels): CounterSeries {
    const series = new CounterSeries(labels);
    this.all.push(series);
    return series;
  }
  async get(): Promise<MetricData> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.all.map((s) => ({ labels: { ...s.labels }, value: s.value })),
    };
  }
}

/** A histogram whose series are created once per label set (callers keep them). */
export class PlainHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly all: HistogramSeries[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }
  series(labels: Labels): HistogramSeries {
    const series = new HistogramSeries(labels, this.bounds);
    this.all.push(series);
    return series;
  }
  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.all) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { ...s.labels, le: "+Inf" }, value: s.count, metricName: bucket });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
