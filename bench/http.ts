/**
 * HTTP throughput: `POST /api/query` of an indexed point read on the platform vs its floor, a plain
 * `node:http` server doing the same read with one prepared statement (`fixtures/raw-point-read.ts`),
 * and vs that floor parsing the document and serializing its answer (what any server that hands the
 * document to a JavaScript function must add),
 * and vs a plain Hono hello-world and JSON echo; plus the same endpoint calling a query that reads
 * nothing, which splits the platform's cost into its HTTP path and its database read. Each server
 * runs in its own process, the same autocannon settings for all, runs interleaved round by round;
 * medians of the rounds are reported. Each target's note gives its server's CPU time per request
 * (`/proc`, far less inflated by a busy machine than throughput) and the bytes of one response,
 * headers included.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pointReadBodies } from "./fixtures/point-app.ts";
import { LOAD_DEFAULTS, runLoad } from "./lib/load.ts";
import { type ServerLoad, withServerCpu } from "./lib/server-load.ts";
import { spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, formatRatio, interleave, median } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const ROUNDS = 3;
const WARMUP_SEC = 1;
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

async function expectOk(response: Response, check: (text: string) => boolean, what: string): Promise<void> {
  const text = await response.text();
  if (!response.ok || !check(text))
    throw new Error(`${what} answered ${response.status}: ${text.slice(0, 200)}`);
}

export const http: BenchGroup = {
  title: "HTTP throughput, server and load generator in separate processes",
  async run(ctx) {
    const dataDir = await ctx.tempDir("bench-http-");
    const metricsDataDir = await ctx.tempDir("bench-http-metrics-");
    const rawDataDir = await ctx.tempDir("bench-http-raw-");
    const parsedDataDir = await ctx.tempDir("bench-http-parsed-");
    ctx.log("starting servers");
    const [platformServer, metricsServer, hono] = await Promise.all([
      spawnServer(fixture("platform-server.ts"), { BENCH_DATA_DIR: dataDir }),
      spawnServer(fixture("platform-server.ts"), { BENCH_DATA_DIR: metricsDataDir, BENCH_METRICS: "1" }),
      spawnServer(fixture("hono-hello.ts")),
    ]);
    // Once ours has seeded its file: the floors copy its documents (the same bytes to answer).
    const copyFrom = join(dataDir, "bench.sqlite");
    const [raw, parsed] = await Promise.all([
      spawnServer(fixture("raw-point-read.ts"), { BENCH_DATA_DIR: rawDataDir, BENCH_COPY_FROM: copyFrom }),
      spawnServer(fixture("raw-point-read.ts"), {
        BENCH_DATA_DIR: parsedDataDir,
        BENCH_COPY_FROM: copyFrom,
        BENCH_MATERIALIZE: "1",
      }),
    ]);
    ctx.defer(() => raw.stop());
    ctx.defer(() => parsed.stop());
    ctx.defer(() => platformServer.stop());
    ctx.defer(() => metricsServer.stop());
    ctx.defer(() => hono.stop());

    const bodies = pointReadBodies(64);
    const noopBody = JSON.stringify({ path: "items:noop", args: {} });
    const echoBody = bodies[0];
    const post = (url: string, body: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    await expectOk(
      await post(`${platformServer.url}/api/query`, bodies[1]),
      (t) => JSON.parse(t).value?.key !== undefined,
      "/api/query",
    );
    await expectOk(
      await post(`${platformServer.url}/api/query`, noopBody),
      (t) => JSON.parse(t).status === "success" && JSON.parse(t).value === null,
      "/api/query reading nothing",
    );
    await expectOk(
      await post(`${raw.url}/api/query`, bodies[1]),
      (t) => JSON.parse(t).value?.key === JSON.parse(bodies[1]).args.key,
      "raw point read",
    );
    for (const body of [bodies[0], bodies[bodies.length - 1]]) {
      const [a, b, c] = await Promise.all(
        [platformServer, raw, parsed].map(async (s) => (await post(`${s.url}/api/query`, body)).text()),
      );
      if (a !== b || a !== c) throw new Error(`the floors answered ${b} and ${c}, ours ${a}`);
    }
    await expectOk(await fetch(`${hono.url}/`), (t) => t === "Hello Hono!", "hello-world");
    await expectOk(
      await post(`${hono.url}/json`, echoBody),
      (t) => JSON.parse(t).status === "success",
      "JSON echo",
    );

    const targets = {
      hello: (durationSec: number) => runLoad({ url: `${hono.url}/`, durationSec }),
      echo: (durationSec: number) =>
        runLoad({ url: `${hono.url}/json`, method: "POST", bodies: [echoBody], durationSec }),
      query: (durationSec: number) =>
        runLoad({ url: `${platformServer.url}/api/query`, method: "POST", bodies, durationSec }),
      noop: (durationSec: number) =>
        runLoad({ url: `${platformServer.url}/api/query`, method: "POST", bodies: [noopBody], durationSec }),
      metrics: (durationSec: number) =>
        runLoad({ url: `${metricsServer.url}/api/query`, method: "POST", bodies, durationSec }),
      raw: (durationSec: number) =>
        runLoad({ url: `${raw.url}/api/query`, method: "POST", bodies, durationSec }),
      parsed: (durationSec: number) =>
        runLoad({ url: `${parsed.url}/api/query`, method: "POST", bodies, durationSec }),
    };
    ctx.log("warming up");
    // Short runs whose numbers are discarded: JIT warm-up on both sides.
    for (const run of Object.values(targets)) await run(WARMUP_SEC);
    ctx.log(`measuring ${ROUNDS} interleaved rounds of ${LOAD_DEFAULTS.durationSec} s per target`);
    const results = await interleave<ServerLoad>(ROUNDS, {
      hello: () => withServerCpu(hono.pid, () => targets.hello(LOAD_DEFAULTS.durationSec)),
      echo: () => withServerCpu(hono.pid, () => targets.echo(LOAD_DEFAULTS.durationSec)),
      query: () => withServerCpu(platformServer.pid, () => targets.query(LOAD_DEFAULTS.durationSec)),
      noop: () => withServerCpu(platformServer.pid, () => targets.noop(LOAD_DEFAULTS.durationSec)),
      metrics: () => withServerCpu(metricsServer.pid, () => targets.metrics(LOAD_DEFAULTS.durationSec)),
      raw: () => withServerCpu(raw.pid, () => targets.raw(LOAD_DEFAULTS.durationSec)),
      parsed: () => withServerCpu(parsed.pid, () => targets.parsed(LOAD_DEFAULTS.durationSec)),
    });

    const rps = (name: keyof typeof targets) => median(results[name].map((r) => r.load.requestsPerSec));
    // What the server spent per request and what one response weighs: the same yardstick for all.
    const cost = (name: keyof typeof targets) =>
      `server CPU ${formatNs(median(results[name].map((r) => r.cpuPerRequestNs)))}/request, ` +
      `${Math.round(median(results[name].map((r) => r.load.bytesPerResponse)))} B/response`;
    // autocannon records whole milliseconds; 0 means "under 1 ms".
    const p = (name: keyof typeof targets, key: "latencyP50Ms" | "latencyP99Ms") => {
      const ms = median(results[name].map((r) => r.load[key]));
      return ms < 1 ? "< 1 ms" : `${ms} ms`;
    };
    // Ratios pair the runs of the same round (back to back), then take the median over rounds.
    const ratio = (a: keyof typeof targets, b: keyof typeof targets) =>
      median(results[a].map((r, i) => r.load.requestsPerSec / results[b][i].load.requestsPerSec));
    const settings = `${LOAD_DEFAULTS.connections} connections, pipelining ${LOAD_DEFAULTS.pipelining}, ${ROUNDS}×${LOAD_DEFAULTS.durationSec} s`;
    const queryVsHello = ratio("query", "hello");

    const withMetrics = ratio("metrics", "query");
    const cpu = (name: keyof typeof targets) => median(results[name].map((r) => r.cpuPerRequestNs));
    // CPU per request of a against b, paired round by round like the throughput ratios.
    const cpuRatio = (a: keyof typeof targets, b: keyof typeof targets) =>
      median(results[a].map((r, i) => r.cpuPerRequestNs / results[b][i].cpuPerRequestNs));
    const queryVsRaw = ratio("query", "raw");
    const queryCpuVsRaw = cpuRatio("query", "raw");
    const queryVsParsed = ratio("query", "parsed");
    const queryCpuVsParsed = cpuRatio("query", "parsed");
    const metricsCpu = cpuRatio("metrics", "query");
    const rows: BenchRow[] = [
      {
        benchmark: "Hono hello-world `GET /` (baseline)",
        result: `${formatCount(rps("hello"))} req/s`,
        p50: p("hello", "latencyP50Ms"),
        p99: p("hello", "latencyP99Ms"),
        note: `${settings}; ${cost("hello")}`,
      },
      {
        benchmark: "Hono JSON echo `POST /json` (reference)",
        result: `${formatCount(rps("echo"))} req/s`,
        p50: p("echo", "latencyP50Ms"),
        p99: p("echo", "latencyP99Ms"),
        note: `parses the body, answers JSON; ${cost("echo")}`,
      },
      {
        benchmark: "Floor: `node:http` + one prepared better-sqlite3 read, same body and answer",
        result: `${formatCount(rps("raw"))} req/s`,
        p50: p("raw", "latencyP50Ms"),
        p99: p("raw", "latencyP99Ms"),
        note: `our 10k docs (copied), the same keys, WAL; ${cost("raw")}`,
      },
      {
        benchmark: "Floor with the document parsed and the answer serialized",
        result: `${formatCount(rps("parsed"))} req/s`,
        p50: p("parsed", "latencyP50Ms"),
        p99: p("parsed", "latencyP99Ms"),
        note: `the floor above, but \`JSON.parse\` of the stored text and \`JSON.stringify\` of the answer instead of splicing the text in, as a server handing the document to a function must; ${cost("parsed")}`,
      },
      {
        benchmark: "Platform `POST /api/query` indexed point read",
        result: `${formatCount(rps("query"))} req/s`,
        p50: p("query", "latencyP50Ms"),
        p99: p("query", "latencyP99Ms"),
        note: `10k docs, 64 different keys; ${cost("query")}`,
      },
      {
        benchmark: "Platform `POST /api/query` reading nothing",
        result: `${formatCount(rps("noop"))} req/s`,
        p50: p("noop", "latencyP50Ms"),
        p99: p("noop", "latencyP99Ms"),
        note: `the same endpoint without the database read; ${cost("noop")}`,
      },
      {
        benchmark: "Platform `POST /api/query` indexed point read, metrics on",
        result: `${formatCount(rps("metrics"))} req/s`,
        p50: p("metrics", "latencyP50Ms"),
        p99: p("metrics", "latencyP99Ms"),
        note: `the same read with Prometheus metrics on, no tracing SDK; ${cost("metrics")}`,
      },
      {
        benchmark: "ratio: metrics on ÷ off (same read)",
        result: formatRatio(withMetrics),
        goal: "≥ 95%",
        ok: withMetrics >= 0.95,
        note: "the cost of metrics per request; tracing without an SDK is in both",
      },
      {
        benchmark: "ratio: server CPU per request, metrics on ÷ off",
        result: `${metricsCpu.toFixed(2)}×`,
        goal: "≤ 1.05×",
        ok: metricsCpu <= 1.05,
        note: `medians ${formatNs(cpu("metrics"))} vs ${formatNs(cpu("query"))}; median of per-round ratios`,
      },
      {
        benchmark: "ratio: /api/query ÷ its floor (throughput)",
        result: formatRatio(queryVsRaw),
        goal: "≥ 75%",
        ok: queryVsRaw >= 0.75,
        note: "median of per-round ratios",
      },
      {
        benchmark: "ratio: /api/query ÷ its floor (server CPU per request)",
        result: `${queryCpuVsRaw.toFixed(2)}×`,
        goal: "≤ 1.33×",
        ok: queryCpuVsRaw <= 1.33,
        note: `medians ${formatNs(cpu("query"))} vs ${formatNs(cpu("raw"))}`,
      },
      {
        benchmark: "ratio: /api/query ÷ the floor with the document parsed (throughput)",
        result: formatRatio(queryVsParsed),
        note: "for reference (no goal): the part of the gap that is not the document's JSON round trip",
      },
      {
        benchmark: "ratio: /api/query ÷ the floor with the document parsed (server CPU per request)",
        result: `${queryCpuVsParsed.toFixed(2)}×`,
        note: `medians ${formatNs(cpu("query"))} vs ${formatNs(cpu("parsed"))}`,
      },
      {
        benchmark: "ratio: /api/query ÷ hello-world",
        result: formatRatio(queryVsHello),
        note: "for reference: hello-world reads no database (the goal is against the floor above)",
      },
      {
        benchmark: "ratio: /api/query reading nothing ÷ hello-world",
        result: formatRatio(ratio("noop", "hello")),
        note: "the HTTP path and the runtime alone: what the point read costs is the difference",
      },
      {
        benchmark: "ratio: /api/query ÷ JSON echo",
        result: formatRatio(ratio("query", "echo")),
        note: "the platform's own share of the gap",
      },
    ];
    return rows;
  },
};
