/**
 * Function calls over HTTP and the WebSocket: one latency histogram whose `_count` counts them. The
 * hot path only finds its pre-bound series in a map and adds to plain numbers (plain-series.ts): no
 * label object, no string built per call. Labels are bounded: registered function names or
 * "unknown", outcomes are "ok" or codes of the error registry.
 */
import { AppError } from "../errors.ts";
import { type HistogramSeries, PlainHistogram } from "./plain-series.ts";
import { metricsRegistry } from "./registry.ts";

/** How a function call arrived. */
export type CallTransport = "http" | "ws";
/** What a call ran. */
export type CallKind = "query" | "mutation" | "action";

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const callDuration = new PlainHistogram(
  "service_auth_function_call_duration_seconds",
  "Function calls over HTTP (POST /api/query|mutation|action) and the WebSocket, by transport, kind, function and outcome (ok or the error code); _count counts the calls",
  LATENCY_BUCKETS,
  metricsRegistry,
);

/** Map keys per transport and kind, as constants: no string is built per call. */
const SERIES_KEYS = {
  http: { query: "query", mutation: "mutation", action: "action" },
  ws: { query: "ws:query", mutation: "ws:mutation", action: "ws:action" },
} as const;
/** transport → kind → function → outcome → pre-bound series. Bounded by registered functions × codes. */
const callSeries = new Map<string, Map<string, Map<string, HistogramSeries>>>();

function seriesOf(transport: CallTransport, kind: CallKind, fn: string, outcome: string): HistogramSeries {
  const key = SERIES_KEYS[transport][kind];
  let byFunction = callSeries.get(key);
  if (!byFunction) callSeries.set(key, (byFunction = new Map()));
  let byOutcome = byFunction.get(fn);
  if (!byOutcome) byFunction.set(fn, (byOutcome = new Map()));
  let series = byOutcome.get(outcome);
  if (!series) {
    byOutcome.set(outcome, (series = callDuration.series({ transport, kind, function: fn, outcome })));
  }
  return series;
}

/**
 * Records one function call. `fn` must be a registered function's path or "unknown" (callers check
 * with `BackendRuntime.functionLabel`); `startedAt` is `performance.now()` when the call arrived.
 */
export function observeCall(
  transport: CallTransport,
  kind: CallKind,
  fn: string,
  outcome: string,
  startedAt: number,
): void {
  seriesOf(transport, kind, fn, outcome).observe((performance.now() - startedAt) / 1000);
}

/** The outcome label of a call that threw: its error code (bounded by the registry) or INTERNAL. */
export function outcomeOf(error: unknown): string {
  return error instanceof AppError ? error.code : "INTERNAL";
}
