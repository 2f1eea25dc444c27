/**
 * Cluster mode (`WORKERS=2`, real processes): one scrape covers every worker. The primary serves
 * METRICS_PORT with the workers' metrics summed, and a worker asked on the public port (with
 * METRICS_TOKEN) answers the same aggregate, relayed through the primary.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Pinned, pinWorkers, startCluster, type TestCluster } from "../cluster/fixtures/cluster.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";
import {
  hasSample,
  onlyFamilies,
  promtoolCheck,
  promtoolInstalled,
  sampleValue,
  scrape,
} from "./fixtures/scrape.ts";

const TOKEN = "metrics-token-0123456789abcdef";
const CALLS = "service_auth_function_call_duration_seconds_count";
const WHOAMI = { transport: "http", kind: "query", function: "cluster:whoami", outcome: "ok" };

describe("metrics of a cluster (2 workers)", () => {
  let cluster: TestCluster;
  let workers: Pinned[];
  let metricsUrl: string;

  beforeAll(async () => {
    cluster = await startCluster(tempDatabaseFile(), 2, { METRICS_PORT: "0", METRICS_TOKEN: TOKEN });
    metricsUrl = /^metrics (\S+)$/m.exec(cluster.server.stdout())?.[1] ?? "";
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    workers = await pinWorkers(cluster.port, 2);
  }, PROCESS_TEST_TIMEOUT);
  afterAll(async () => {
    for (const w of workers ?? []) w.close();
    await cluster?.server.kill();
  });

  it(
    "sums the workers' counters in one scrape, on the primary's port and through any worker",
    async () => {
      const [a, b] = workers;
      const before = sampleValue((await scrape(metricsUrl, TOKEN)).text, CALLS, WHOAMI);
      for (let i = 0; i < 3; i++) expect((await a.call("query", "cluster:whoami")).status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await b.call("query", "cluster:whoami")).status).toBe(200);
      // Neither worker alone made 8 calls: only the sum of both shows them all.
      const primary = await scrape(metricsUrl, TOKEN);
      expect(primary.status).toBe(200);
      expect(sampleValue(primary.text, CALLS, WHOAMI) - before).toBe(8);
      // Process metrics come from both workers too: each has its own resident memory.
      expect(sampleValue(primary.text, "process_resident_memory_bytes")).toBeGreaterThan(0);

      // The public port's /metrics, on whichever worker takes the connection: the same sum.
      const relayed = await scrape(`${cluster.url}/metrics`, TOKEN);
      expect(relayed.status).toBe(200);
      expect(sampleValue(relayed.text, CALLS, WHOAMI) - before).toBe(8);
      expect((await scrape(`${cluster.url}/metrics`)).status).toBe(401);
      expect((await scrape(metricsUrl)).status).toBe(401);
    },
    PROCESS_TEST_TIMEOUT,
  );

  it(
    "reports the commit channel of every worker and no commit lag once caught up",
    async () => {
      expect((await workers[0].call("mutation", "cluster:newSession", { name: "lag" })).status).toBe(200);
      await eventually(async () => {
        const text = (await scrape(metricsUrl, TOKEN)).text;
        expect(sampleValue(text, "service_auth_commit_channel", { mode: "listening" })).toBe(2);
        expect(hasSample(text, "service_auth_commit_lag")).toBe(true);
        expect(sampleValue(text, "service_auth_commit_lag")).toBe(0);
      });
    },
    PROCESS_TEST_TIMEOUT,
  );

  it.skipIf(!promtoolInstalled)(
    "aggregates into a scrape promtool accepts",
    async () => {
      const text = (await scrape(metricsUrl, TOKEN)).text;
      // Our families alone, and the whole aggregate with the workers' process metrics.
      for (const checked of [onlyFamilies(text, "service_auth_"), text]) {
        const { code, output } = await promtoolCheck(checked);
        expect(output).toBe("");
        expect(code).toBe(0);
      }
      expect(text).toMatch(/^nodejs_active_handles\{/m);
    },
    PROCESS_TEST_TIMEOUT,
  );
});
