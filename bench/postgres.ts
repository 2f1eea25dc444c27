/**
 * Cross-instance costs on PostgreSQL (issue 10, "Performance"): three instances of the same app
 * (`fixtures/postgres-server.ts`), each in its own process, on one throwaway PostgreSQL server
 * started here (`test/helpers/postgres.ts`).
 *
 * 1. Live update across instances: a WebSocket client subscribed on B; a mutation posted over
 *    HTTP to A; time from sending the mutation to the update at B.
 * 2. Revocation refused everywhere: sessions warm in B's and C's identity caches; time from
 *    sending the revoke to A until B and C both answered 401 (asked right after A's response);
 *    stale 200s are counted (goal 0).
 * 3. The cross-instance check per authenticated request: autocannon against B (a cached token,
 *    `bench:me`) and against a fourth instance started with `BENCH_CROSS_CHECK=off`; rounds
 *    interleaved, median of the per-round ratios. And, less exposed to a busy machine's noise,
 *    in-process (after the servers stopped): `runQuery("bench:me", {}, {token})` one call at a
 *    time on two backends in this process, with and without the check, interleaved rounds, medians.
 */
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { anyApi } from "../src/backend/functions/references.ts";
import { BackendRuntime } from "../src/backend/runtime.ts";
import { PostgresEngine } from "../src/backend/storage/postgres/engine.ts";
import { BackendClient } from "../src/client/index.ts";
import { authConfig, modules, schema } from "./fixtures/postgres-app.ts";
import { postFunction } from "./lib/api-call.ts";
import { LOAD_DEFAULTS, type LoadResult, runLoad } from "./lib/load.ts";
import { startBenchPostgres } from "./lib/postgres-db.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import {
  formatCount,
  formatNs,
  formatRatio,
  interleave,
  median,
  sampleAsync,
  summarize,
} from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const ISSUER = "https://bench.postgres.test";
const AUDIENCE = "bench-postgres";
const fixture = fileURLToPath(new URL("./fixtures/postgres-server.ts", import.meta.url));
const LIVE_SAMPLES = 300;
const REVOCATIONS = 100;
const ROUNDS = 3;
const WARMUP_SEC = 1;
const IN_PROCESS_ROUNDS = 5;
const IN_PROCESS_CALLS = 2_000;

export const postgres: BenchGroup = {
  title: "PostgreSQL: three instances on one database",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const databaseUrl = await startBenchPostgres(ctx);
    const { jwk, sign } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { DATABASE_URL: databaseUrl, BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE };

    ctx.log("starting 3 instances and one without the cross-instance check");
    const servers: SpawnedServer[] = [];
    const extras: Record<string, string>[] = [{}, {}, {}, { BENCH_CROSS_CHECK: "off" }];
    for (const extra of extras) {
      const server = await spawnServer(fixture, { ...env, ...extra });
      ctx.defer(() => server.stop());
      servers.push(server);
    }
    const [a, b, c, unchecked] = servers.map((s) => s.url);

    // 1. Live update A → B.
    ctx.log(`live updates: ${LIVE_SAMPLES} mutations on A, subscriber on B`);
    const client = new BackendClient(b, { WebSocket: WebSocket as never });
    ctx.defer(() => client.close());
    let latest: string[] = [];
    let waiter: (() => void) | undefined;
    let expected = "";
    client.subscribe(anyApi.bench.list as any, { channel: "live" }, (value: unknown) => {
      latest = value as string[];
      if (waiter && latest.includes(expected)) waiter();
    });
    const live: number[] = [];
    for (let i = -20; i < LIVE_SAMPLES; i++) {
      expected = `m${i}`;
      const seen = new Promise<void>((resolve) => (waiter = resolve));
      const start = process.hrtime.bigint();
      const posted = await postFunction(a, "mutation", "bench:post", { channel: "live", body: expected });
      if (posted.status !== 200) throw new Error(`post answered ${posted.status}`);
      await seen;
      if (i >= 0) live.push(Number(process.hrtime.bigint() - start));
    }
    client.close();

    // 2. Revocation on A refused by B and C.
    ctx.log(`revocations: ${REVOCATIONS}`);
    const refused: number[] = [];
    let stale = 0;
    for (let i = 0; i < REVOCATIONS; i++) {
      const { value } = (await postFunction(a, "mutation", "bench:createSession", {})).body;
      const token = await sign(value.userId, value.sessionId);
      for (const url of [b, c, b, c]) {
        const warm = await postFunction(url, "query", "bench:me", {}, token);
        if (warm.status !== 200) throw new Error(`bench:me answered ${warm.status}`);
      }
      const start = process.hrtime.bigint();
      const revoked = await postFunction(a, "mutation", "bench:revoke", { id: value.sessionId });
      if (revoked.status !== 200) throw new Error(`revoke answered ${revoked.status}`);
      const answers = await Promise.all(
        [b, c].map((url) => postFunction(url, "query", "bench:me", {}, token)),
      );
      refused.push(Number(process.hrtime.bigint() - start));
      stale += answers.filter((r) => r.status !== 401).length;
    }

    // 3. The check's cost: a cached token against B (checked) and the unchecked instance.
    const { value } = (await postFunction(a, "mutation", "bench:createSession", {})).body;
    const token = await sign(value.userId, value.sessionId);
    const meBody = JSON.stringify({ path: "bench:me", args: {} });
    const load = (url: string, durationSec: number) =>
      runLoad({
        url: `${url}/api/query`,
        method: "POST",
        bodies: [meBody],
        headers: { authorization: `Bearer ${token}` },
        durationSec,
      });
    ctx.log("warming up");
    await load(b, WARMUP_SEC);
    await load(unchecked, WARMUP_SEC);
    ctx.log(`measuring ${ROUNDS} interleaved rounds of ${LOAD_DEFAULTS.durationSec} s per target`);
    const rounds = await interleave<LoadResult>(ROUNDS, {
      checked: () => load(b, LOAD_DEFAULTS.durationSec),
      unchecked: () => load(unchecked, LOAD_DEFAULTS.durationSec),
    });
    const checkedRps = median(rounds.checked.map((r) => r.requestsPerSec));
    const uncheckedRps = median(rounds.unchecked.map((r) => r.requestsPerSec));
    const ratio = median(rounds.checked.map((r, i) => r.requestsPerSec / rounds.unchecked[i].requestsPerSec));

    for (const server of servers) await server.stop();

    // 3b. In-process: the same call on two backends, with and without the check.
    ctx.log(`in-process: ${IN_PROCESS_ROUNDS} interleaved rounds of ${IN_PROCESS_CALLS} calls`);
    const backends: Record<string, BackendRuntime> = {};
    for (const [name, crossInstanceCheck] of [
      ["checked", true],
      ["unchecked", false],
    ] as const) {
      const backend = new BackendRuntime({
        schema,
        modules,
        engine: new PostgresEngine({ connectionString: databaseUrl, crossInstanceCheck }),
        auth: authConfig(jwk, ISSUER, AUDIENCE),
      });
      await backend.start();
      ctx.defer(() => backend.close());
      backends[name] = backend;
    }
    const me = (backend: BackendRuntime) => () => backend.runQuery("bench:me", {}, { token });
    for (const backend of Object.values(backends)) await sampleAsync(500, me(backend));
    const inProcess = await interleave<number[]>(IN_PROCESS_ROUNDS, {
      checked: () => sampleAsync(IN_PROCESS_CALLS, me(backends.checked)),
      unchecked: () => sampleAsync(IN_PROCESS_CALLS, me(backends.unchecked)),
    });
    const checkedCall = summarize(inProcess.checked.flat());
    const uncheckedCall = summarize(inProcess.unchecked.flat());

    const liveSummary = summarize(live);
    const refusedSummary = summarize(refused);
    const ms = (r: LoadResult[]) => `${median(r.map((x) => x.latencyP50Ms))} ms`;
    return [
      {
        benchmark: "Live update across instances (mutation on A → update at B)",
        result: `${formatNs(liveSummary.p99)} p99`,
        p50: formatNs(liveSummary.p50),
        p99: formatNs(liveSummary.p99),
        goal: "p99 ≤ 25 ms",
        ok: liveSummary.p99 <= 25e6,
        note: `${LIVE_SAMPLES} sequential`,
      },
      {
        benchmark: "Revocation on A refused by B and C (revoke sent → both answered 401)",
        result: `${formatNs(refusedSummary.p99)} p99`,
        p50: formatNs(refusedSummary.p50),
        p99: formatNs(refusedSummary.p99),
        goal: "p99 ≤ 25 ms",
        ok: refusedSummary.p99 <= 25e6,
        note: `${REVOCATIONS} revocations`,
      },
      {
        benchmark: "Stale 200s after a revocation returned",
        result: String(stale),
        goal: "0",
        ok: stale === 0,
        note: `${2 * REVOCATIONS} requests`,
      },
      {
        benchmark: "Authenticated `POST /api/query` (cached token), cross-instance check",
        result: `${formatCount(checkedRps)} req/s`,
        p50: ms(rounds.checked),
      },
      {
        benchmark: "Same, check removed (`BENCH_CROSS_CHECK=off`)",
        result: `${formatCount(uncheckedRps)} req/s`,
        p50: ms(rounds.unchecked),
      },
      {
        benchmark: "with check ÷ without",
        result: formatRatio(ratio),
        goal: "≥ 90%",
        ok: ratio >= 0.9,
        note: "median of the per-round ratios",
      },
      {
        benchmark: "in-process `runQuery` bench:me (cached token), with check",
        result: `${formatNs(checkedCall.p50)} median`,
        p50: formatNs(checkedCall.p50),
        p99: formatNs(checkedCall.p99),
      },
      {
        benchmark: "in-process, check off",
        result: `${formatNs(uncheckedCall.p50)} median`,
        p50: formatNs(uncheckedCall.p50),
        p99: formatNs(uncheckedCall.p99),
      },
      {
        benchmark: "in-process calls/s with check ÷ without (1 / median)",
        result: formatRatio(uncheckedCall.p50 / checkedCall.p50),
        goal: "≥ 90%",
        ok: uncheckedCall.p50 / checkedCall.p50 >= 0.9,
      },
    ];
  },
};
