/**
 * Read replicas (issue 24, item 3): what a streaming standby in `DATABASE_READ_URLS` takes off the
 * primary, and what the freshness wait adds to a read. A primary (`synchronous_commit=on`) and a
 * hot standby made by `pg_basebackup -R`, on loopback; the app of `postgres-app.ts`.
 *
 * 1. Authenticated `POST /api/query` (`bench:me`, a cached token) against two servers on the same
 *    database, one reading from the primary, one from the replica, rounds interleaved: req/s, p50,
 *    the server's CPU per request, and where its reads ran (`service_auth_db_replica_reads_total`).
 * 2. In this process, one call at a time on two backends (primary only / with the replica): a
 *    query alone (the stamp's round trip to the primary overlaps the replica's BEGIN), and a query
 *    right after the same backend's mutation (the replica must replay it first: the freshness wait).
 *
 * `BENCH_SECONDS` (default 3) and `BENCH_ROUNDS` (default 3) shorten a sanity run.
 */
import { fileURLToPath } from "node:url";
import { metricsRegistry } from "../src/backend/metrics/metrics.ts";
import { BackendRuntime } from "../src/backend/runtime.ts";
import { PostgresEngine } from "../src/backend/storage/postgres/engine.ts";
import { startPostgres } from "../test/helpers/postgres.ts";
import { startStandby } from "../test/helpers/postgres-standby.ts";
import { authConfig, modules, schema } from "./fixtures/postgres-app.ts";
import { callFunction } from "./lib/api-call.ts";
import { freePort } from "./lib/free-port.ts";
import { runLoad } from "./lib/load.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { type ServerLoad, withServerCpu } from "./lib/server-load.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, formatRatio, interleave, median, summarize } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const ISSUER = "https://bench.pg-replicas.test";
const AUDIENCE = "bench-pg-replicas";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLS = 500;
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** `service_auth_db_replica_reads_total` by outcome, from a Prometheus text exposition. */
function replicaReadsIn(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^service_auth_db_replica_reads_total\{outcome="(\w+)"\} (\S+)$/gm))
    counts[match[1]] = Number(match[2]);
  return counts;
}

/** A difference of latencies, with its sign. */
const signedNs = (ns: number) => `${ns < 0 ? "−" : "+"}${formatNs(Math.abs(ns))}`;

/** The share of reads a replica served between two counts. */
function replicaShare(before: Record<string, number>, after: Record<string, number>): string {
  const delta = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  let total = 0;
  for (const k of keys) total += delta(k);
  const replica = delta("replica_fresh") + delta("replica_waited");
  return total
    ? `${formatRatio(replica / total)} of reads on the replica (${formatRatio(delta("replica_waited") / total)} after a wait)`
    : "no reads counted";
}

export const pgReplicas: BenchGroup = {
  title: "PostgreSQL read replicas: replica read throughput and the freshness wait",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    ctx.log("starting PostgreSQL and a streaming standby");
    const primary = await startPostgres(["synchronous_commit=on"]);
    ctx.defer(() => primary.stop());
    const databaseUrl = await primary.createDatabase();
    const standby = await startStandby(primary);
    ctx.defer(() => standby.stop());
    const replicaUrl = standby.urlOf(databaseUrl);

    const { jwk, sign } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE, DATABASE_URL: databaseUrl };
    ctx.log("starting the app twice: reading from the primary, and from the replica");
    const metricsPort = await freePort();
    const servers: Record<"primary" | "replica", SpawnedServer> = {
      primary: await spawnServer(fixture("postgres-server.ts"), env),
      replica: await spawnServer(fixture("postgres-server.ts"), {
        ...env,
        DATABASE_READ_URLS: replicaUrl,
        METRICS_PORT: String(metricsPort),
      }),
    };
    for (const server of Object.values(servers)) ctx.defer(() => server.stop());
    const scrape = async () =>
      replicaReadsIn(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());

    const { userId, sessionId } = await callFunction(
      servers.primary.url,
      "mutation",
      "bench:createSession",
      {},
    );
    const token = await sign(userId, sessionId);
    await standby.caughtUp();
    const body = JSON.stringify({ path: "bench:me", args: {} });
    const load = (server: SpawnedServer, durationSec: number) =>
      runLoad({
        url: `${server.url}/api/query`,
        method: "POST",
        bodies: [body],
        headers: { authorization: `Bearer ${token}` },
        durationSec,
      });
    ctx.log("warming up");
    for (const server of Object.values(servers)) await load(server, 1);
    const before = await scrape();
    ctx.log(`measuring ${ROUNDS} interleaved rounds of ${SECONDS} s per server`);
    const results = await interleave<ServerLoad>(ROUNDS, {
      primary: () => withServerCpu(servers.primary.pid, () => load(servers.primary, SECONDS)),
      replica: () => withServerCpu(servers.replica.pid, () => load(servers.replica, SECONDS)),
    });
    const share = replicaShare(before, await scrape());
    for (const server of Object.values(servers)) await server.stop();

    // 2. One call at a time, in this process.
    ctx.log(`freshness wait: ${ROUNDS} interleaved rounds of ${CALLS} calls per backend`);
    const backends = {} as Record<"primary" | "replica", BackendRuntime>;
    for (const name of ["primary", "replica"] as const) {
      const backend = new BackendRuntime({
        schema,
        modules,
        auth: authConfig(jwk, ISSUER, AUDIENCE),
        engine: new PostgresEngine({
          connectionString: databaseUrl,
          ...(name === "replica" ? { readConnectionStrings: [replicaUrl] } : {}),
        }),
      });
      await backend.start();
      ctx.defer(() => backend.close());
      backends[name] = backend;
    }
    let n = 0;
    const timed = async (run: () => Promise<unknown>) => {
      const t0 = process.hrtime.bigint();
      await run();
      return Number(process.hrtime.bigint() - t0);
    };
    const reads = (backend: BackendRuntime) => async () => {
      const samples: number[] = [];
      for (let i = 0; i < CALLS; i++)
        samples.push(await timed(() => backend.runQuery("bench:list", { channel: "quiet" })));
      return samples;
    };
    const readsAfterWrites = (backend: BackendRuntime) => async () => {
      const samples: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const channel = `ryw-${n++}`;
        await backend.runMutation("bench:post", { channel, body: "mine" });
        samples.push(
          await timed(async () => {
            const seen = (await backend.runQuery("bench:list", { channel })).value as string[];
            if (!seen.includes("mine")) throw new Error("a read missed its own write");
          }),
        );
      }
      return samples;
    };
    for (const backend of Object.values(backends)) await reads(backend)();
    const inProcessBefore = replicaReadsIn(await metricsRegistry.metrics());
    const quiet = await interleave(ROUNDS, {
      primary: reads(backends.primary),
      replica: reads(backends.replica),
    });
    const quietShare = replicaShare(inProcessBefore, replicaReadsIn(await metricsRegistry.metrics()));
    const afterWriteBefore = replicaReadsIn(await metricsRegistry.metrics());
    const ryw = await interleave(ROUNDS, {
      primary: readsAfterWrites(backends.primary),
      replica: readsAfterWrites(backends.replica),
    });
    const rywShare = replicaShare(afterWriteBefore, replicaReadsIn(await metricsRegistry.metrics()));

    const rps = (name: "primary" | "replica") => median(results[name].map((r) => r.load.requestsPerSec));
    const cpu = (name: "primary" | "replica") => median(results[name].map((r) => r.cpuPerRequestNs));
    const p50 = (name: "primary" | "replica") =>
      `${median(results[name].map((r) => r.load.latencyP50Ms))} ms`;
    const ratio = median(
      results.replica.map((r, i) => r.load.requestsPerSec / results.primary[i].load.requestsPerSec),
    );
    const summary = (samples: Record<string, number[][]>, name: string) => summarize(samples[name].flat());
    const quietP = summary(quiet, "primary");
    const quietR = summary(quiet, "replica");
    const rywP = summary(ryw, "primary");
    const rywR = summary(ryw, "replica");
    return [
      {
        benchmark: "Authenticated `POST /api/query` (bench:me, cached token), reads on the primary",
        result: `${formatCount(rps("primary"))} req/s`,
        p50: p50("primary"),
        note: `server CPU ${formatNs(cpu("primary"))}/request; ${ROUNDS}×${SECONDS} s interleaved`,
      },
      {
        benchmark: "Same, reads on the replica (`DATABASE_READ_URLS`)",
        result: `${formatCount(rps("replica"))} req/s`,
        p50: p50("replica"),
        note: `server CPU ${formatNs(cpu("replica"))}/request; ${share}; replica ÷ primary ${formatRatio(ratio)}`,
      },
      {
        benchmark: "Query alone, one at a time: primary vs replica (stamp overlaps BEGIN)",
        result: `${signedNs(quietR.p50 - quietP.p50)} median`,
        p50: `${formatNs(quietP.p50)} / ${formatNs(quietR.p50)}`,
        p99: `${formatNs(quietP.p99)} / ${formatNs(quietR.p99)}`,
        note: `${quietShare}`,
      },
      {
        benchmark: "Query right after its own mutation: primary vs replica (the freshness wait)",
        result: `${signedNs(rywR.p50 - rywP.p50)} median`,
        p50: `${formatNs(rywP.p50)} / ${formatNs(rywR.p50)}`,
        p99: `${formatNs(rywP.p99)} / ${formatNs(rywR.p99)}`,
        note: `${rywShare}; every read saw its write`,
      },
    ];
  },
};
