/**
 * HTTP throughput: `POST /api/query` of an indexed point read on the platform vs its floor, a plain
 * `node:http` server doing the same read with one prepared statement (`fixtures/raw-point-read.ts`),
 * and vs that floor parsing the document and serializing its answer (what any server that hands the
 * document to a JavaScript function must add), and vs that one writing its answers together once per
 * turn of the event loop as ours does, and vs a plain Hono hello-world and JSON echo; plus
 * the same endpoint calling a query that reads nothing, which splits the platform's cost into its
 * HTTP path and its database read. Each server runs as two processes of its own, the same
 * autocannon settings for all, runs interleaved round by round; medians over the rounds and
 * processes are reported, and ratios pair the runs of one round on the same process slot. Each
 * target's note gives its server's CPU time per request (`/proc`, far less inflated by a busy
 * machine than throughput) and the bytes of one response, headers included.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pointReadBodies } from "./fixtures/point-app.ts";
import { LOAD_DEFAULTS, runLoad } from "./lib/load.ts";
import { type ServerLoad, withServerCpu } from "./lib/server-load.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, formatRatio, interleave, median } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const ROUNDS = 3;
/**
 * Processes per server. Two processes of one server differ by 5–10 % in CPU per request on this
 * machine (docs/benchmarks.md): a ratio of one process against one other carries that spread.
 */
const PROCESSES = 2;
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
    // Every server runs as PROCESSES processes, so that no ratio rests on one process against one other.
    const copies = <T>(make: (i: number) => Promise<T>) =>
      Promise.all(Array.from({ length: PROCESSES }, (_, i) => make(i)));
    const dataDirs = await copies((i) => ctx.tempDir(`bench-http-${i}-`));
    const metricsDataDirs = await copies((i) => ctx.tempDir(`bench-http-metrics-${i}-`));
    const rawDataDirs = await copies((i) => ctx.tempDir(`bench-http-raw-${i}-`));
    const parsedDataDirs = await copies((i) => ctx.tempDir(`bench-http-parsed-${i}-`));
    const coalescedDataDirs = await copies((i) => ctx.tempDir(`bench-http-coalesced-${i}-`));
    const kept = (server: SpawnedServer) => {
      ctx.defer(() => server.stop());
      return server;
    };
    ctx.log(`starting servers (${PROCESSES} processes each)`);
    const [platformServers, metricsServers, honos] = await Promise.all([
      copies(async (i) =>
        kept(await spawnServer(fixture("platform-server.ts"), { BENCH_DATA_DIR: dataDirs[i] })),
      ),
      copies(async (i) =>
        kept(
          await spawnServer(fixture("platform-server.ts"), {
            BENCH_DATA_DIR: metricsDataDirs[i],
            BENCH_METRICS: "1",
          }),
        ),
      ),
      copies(async () => kept(await spawnServer(fixture("hono-hello.ts")))),
    ]);
    // Once ours has seeded its file: the floors copy its documents (the same bytes to answer). The
    // other processes of ours seeded their own: the same documents but for their ids and times.
    const copyFrom = join(dataDirs[0], "bench.sqlite");
    const [raws, parseds, coalesceds] = await Promise.all([
      copies(async (i) =>
        kept(
          await spawnServer(fixture("raw-point-read.ts"), {
            BENCH_DATA_DIR: rawDataDirs[i],
            BENCH_COPY_FROM: copyFrom,
          }),
        ),
      ),
      copies(async (i) =>
        kept(
          await spawnServer(fixture("raw-point-read.ts"), {
            BENCH_DATA_DIR: parsedDataDirs[i],
            BENCH_COPY_FROM: copyFrom,
            BENCH_MATERIALIZE: "1",
          }),
        ),
      ),
      copies(async (i) =>
        kept(
          await spawnServer(fixture("raw-point-read.ts"), {
            BENCH_DATA_DIR: coalescedDataDirs[i],
            BENCH_COPY_FROM: copyFrom,
            BENCH_MATERIALIZE: "1",
            BENCH_COALESCE: "1",
          }),
        ),
      ),
    ]);

    const bodies = pointReadBodies(64);
    const noopBody = JSON.stringify({ path: "items:noop", args: {} });
    const echoBody = bodies[0];
    const post = (url: string, body: string) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    for (const server of [...platformServers, ...metricsServers]) {
      await expectOk(
        await post(`${server.url}/api/query`, bodies[1]),
        (t) => JSON.parse(t).value?.key === JSON.parse(bodies[1]).args.key,
        "/api/query",
      );
      await expectOk(
        await post(`${server.url}/api/query`, noopBody),
        (t) => JSON.parse(t).status === "success" && JSON.parse(t).value === null,
        "/api/query reading nothing",
      );
    }
    for (const body of [bodies[0], bodies[bodies.length - 1]]) {
      const [ours, ...floors] = await Promise.all(
        [platformServers[0], ...raws, ...parseds, ...coalesceds].map(async (s) =>
          (await post(`${s.url}/api/query`, body)).text(),
        ),
      );
      for (const floor of floors)
        if (floor !== ours) throw new Error(`a floor answered ${floor}, ours ${ours}`);
    }
    for (const hono of honos) {
      await expectOk(await fetch(`${hono.url}/`), (t) => t === "Hello Hono!", "hello-world");
      await expectOk(
        await post(`${hono.url}/json`, echoBody),
        (t) => JSON.parse(t).status === "success",
        "JSON echo",
      );
    }

    const apiQuery = (servers: SpawnedServer[], body?: string) => ({
      servers,
      load: (server: SpawnedServer, durationSec: number) =>
        runLoad({
          url: `${server.url}/api/query`,
          method: "POST",
          bodies: body ? [body] : bodies,
          durationSec,
        }),
    });
    const targets = {
      hello: {
        servers: honos,
        load: (server: SpawnedServer, durationSec: number) => runLoad({ url: `${server.url}/`, durationSec }),
      },
      echo: {
        servers: honos,
        load: (server: SpawnedServer, durationSec: number) =>
          runLoad({ url: `${server.url}/json`, method: "POST", bodies: [echoBody], durationSec }),
      },
      query: apiQuery(platformServers),
      noop: apiQuery(platformServers, noopBody),
      metrics: apiQuery(metricsServers),
      raw: apiQuery(raws),
      parsed: apiQuery(parseds),
      coalesced: apiQuery(coalesceds),
    };
    const names = Object.keys(targets) as (keyof typeof targets)[];
    ctx.log("warming up");
    // Short runs whose numbers are discarded: JIT warm-up on both sides.
    for (const name of names)
      for (const server of targets[name].servers) await targets[name].load(server, WARMUP_SEC);
    ctx.log(
      `measuring ${ROUNDS} interleaved rounds of ${LOAD_DEFAULTS.durationSec} s per target and process`,
    );
    const cases: Record<string, () => Promise<ServerLoad>> = {};
    for (const name of names) {
      targets[name].servers.forEach((server, i) => {
        cases[`${name} ${i}`] = () =>
          withServerCpu(server.pid, () => targets[name].load(server, LOAD_DEFAULTS.durationSec));
      });
    }
    const byCase = await interleave<ServerLoad>(ROUNDS, cases);
    // Per target, its runs round by round and process by process: index i of two targets pairs runs
    // of the same round on the same process slot.
    const results = Object.fromEntries(
      names.map((name) => [
        name,
        Array.from({ length: ROUNDS }, (_, round) =>
          Array.from({ length: PROCESSES }, (_, i) => byCase[`${name} ${i}`][round]),
        ).flat(),
      ]),
    ) as Record<keyof typeof targets, ServerLoad[]>;

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
    // Ratios pair the runs of one round on the same process slot, then take the median of the pairs.
    const ratio = (a: keyof typeof targets, b: keyof typeof targets) =>
      median(results[a].map((r, i) => r.load.requestsPerSec / results[b][i].load.requestsPerSec));
    const settings = `${LOAD_DEFAULTS.connections} connections, pipelining ${LOAD_DEFAULTS.pipelining}, ${ROUNDS} rounds × ${PROCESSES} processes × ${LOAD_DEFAULTS.durationSec} s`;
    const queryVsHello = ratio("query", "hello");

    const withMetrics = ratio("metrics", "query");
    const cpu = (name: keyof typeof targets) => median(results[name].map((r) => r.cpuPerRequestNs));
    // CPU per request of a against b, paired like the throughput ratios.
    const cpuRatio = (a: keyof typeof targets, b: keyof typeof targets) =>
      median(results[a].map((r, i) => r.cpuPerRequestNs / results[b][i].cpuPerRequestNs));
    const queryVsRaw = ratio("query", "raw");
    const queryCpuVsRaw = cpuRatio("query", "raw");
    // A floor compared for reference (no goal): throughput and CPU per request, paired as above.
    const referenceRatios = (floor: keyof typeof targets, label: string, why: string): BenchRow[] => [
      {
        benchmark: `ratio: /api/query ÷ ${label} (throughput)`,
        result: formatRatio(ratio("query", floor)),
        note: `for reference (no goal): ${why}`,
      },
      {
        benchmark: `ratio: /api/query ÷ ${label} (server CPU per request)`,
        result: `${cpuRatio("query", floor).toFixed(2)}×`,
        note: `medians ${formatNs(cpu("query"))} vs ${formatNs(cpu(floor))}`,
      },
    ];
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
        benchmark: "Floor with the document parsed, answers written together per turn of the event loop",
        result: `${formatCount(rps("coalesced"))} req/s`,
        p50: p("coalesced", "latencyP50Ms"),
        p99: p("coalesced", "latencyP99Ms"),
        note: `the floor above, writing its answers as ours does (\`http/coalesced-writes.ts\`: once per turn, at most 16 together); ${cost("coalesced")}`,
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
        note: `medians ${formatNs(cpu("metrics"))} vs ${formatNs(cpu("query"))}; median of the paired runs' ratios`,
      },
      {
        benchmark: "ratio: /api/query ÷ its floor (throughput)",
        result: formatRatio(queryVsRaw),
        goal: "≥ 75%",
        ok: queryVsRaw >= 0.75,
        note: "median of the paired runs' ratios",
      },
      {
        benchmark: "ratio: /api/query ÷ its floor (server CPU per request)",
        result: `${queryCpuVsRaw.toFixed(2)}×`,
        goal: "≤ 1.33×",
        ok: queryCpuVsRaw <= 1.33,
        note: `medians ${formatNs(cpu("query"))} vs ${formatNs(cpu("raw"))}`,
      },
      ...referenceRatios(
        "parsed",
        "the floor with the document parsed",
        "the part of the gap that is not the document's JSON round trip",
      ),
      ...referenceRatios(
        "coalesced",
        "the floor that parses and writes together",
        "against a floor doing the same work the same way, I/O pattern included",
      ),
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
