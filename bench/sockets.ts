/**
 * Sockets at scale in one server process (issue 15, item 1a): {@link SOCKETS} authenticated
 * WebSockets on the example app (`fixtures/sync-server.ts`, real Better Auth JWTs), each with its
 * own live query `bench:me({tab})` (no shared executions: the server's worst case), several tabs
 * per session. The sockets come from {@link PROCESSES} load-generator children (`lib/swarm.ts`),
 * each under the 20,000 open-file limit, each from its own loopback address; the server holds
 * them all in one process under the same limit.
 *
 * 1. Server RSS with all held, and per socket (growth from before the first socket).
 * 2. Idle CPU: the server's CPU time per second over one heartbeat period (every socket pings once,
 *    as the client library does, and the server sweeps its connections every second).
 * 3. Revocation push with them held: `bench:deleteSession` over HTTP → every socket of the
 *    session has `auth_error` (arrival times in the children, CLOCK_MONOTONIC); and the server's
 *    CPU time per revocation.
 */
import { processCpuNs, processRssBytes } from "./lib/proc.ts";
import { openSwarm } from "./lib/swarm.ts";
import { startSyncApp } from "./lib/sync-app.ts";
import { formatCount, formatNs, summarize } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 18_000);
/** Distinct sessions behind the sockets: six tabs each, like the `sync` group's 10,000. */
const SESSIONS = Math.ceil(SOCKETS / 6);
const PROCESSES = 4;
const HEARTBEAT_MS = 20_000;
const REVOCATIONS = 60;
const WARMUP_REVOCATIONS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const sockets: BenchGroup = {
  title: `Sockets at scale: ${formatCount(SOCKETS)} authenticated WebSockets, one live query each, one server process`,
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const app = await startSyncApp(ctx, { name: "sockets" });
    const { server, call } = app;
    const stats = () =>
      call("action", "bench:stats", {}) as Promise<{
        executions: number;
        watches: number;
        connections: number;
      }>;

    ctx.log(`creating ${formatCount(SESSIONS)} users with sessions and their JWTs (token endpoint code)`);
    const sessions = await app.sessions(SESSIONS, "s");

    const rssBefore = processRssBytes(server.pid);
    ctx.log(`opening ${formatCount(SOCKETS)} sockets from ${PROCESSES} processes`);
    const t0 = process.hrtime.bigint();
    const swarm = await openSwarm({
      url: app.wsUrl,
      sockets: SOCKETS,
      processes: PROCESSES,
      path: "bench:me",
      indexArg: "tab",
      tokens: sessions.map((s) => s.token),
      heartbeatMs: HEARTBEAT_MS,
      timeoutMs: 900_000,
    });
    ctx.defer(() => swarm.close());
    const openSec = Number(process.hrtime.bigint() - t0) / 1e9;
    const held = await stats();
    if (swarm.size !== SOCKETS || held.connections < SOCKETS)
      throw new Error(`${swarm.size} of ${SOCKETS} sockets opened, server holds ${held.connections}`);
    const rss = processRssBytes(server.pid);

    ctx.log(`idle: server CPU over one heartbeat period (${HEARTBEAT_MS / 1000} s)`);
    await sleep(2_000);
    const idleCpu0 = processCpuNs(server.pid);
    const idleT0 = process.hrtime.bigint();
    await sleep(HEARTBEAT_MS);
    const idleCpuPerSec =
      (processCpuNs(server.pid) - idleCpu0) / (Number(process.hrtime.bigint() - idleT0) / 1e9);

    ctx.log(`revocation push × ${REVOCATIONS} with the sockets held`);
    const revokeLatency: number[] = [];
    let tabs = 0;
    let revokeCpu = 0;
    const executions0 = (await stats()).executions;
    for (let k = 0; k < WARMUP_REVOCATIONS + REVOCATIONS; k++) {
      const collect = await swarm.awaitMarker('"auth_error"', k);
      const cpu0 = processCpuNs(server.pid);
      const sent = Number(process.hrtime.bigint());
      await call("mutation", "bench:deleteSession", { sessionId: sessions[k].sessionId });
      const seen = await collect();
      if (k < WARMUP_REVOCATIONS) continue;
      revokeCpu += processCpuNs(server.pid) - cpu0;
      tabs += seen.length;
      revokeLatency.push(Math.max(...seen) - sent);
    }
    // Includes the warm-up revocations: executions are counted, not timed.
    const executionsPerRevocation =
      ((await stats()).executions - executions0) / (WARMUP_REVOCATIONS + REVOCATIONS);
    const r = summarize(revokeLatency);
    const rssMb = rss / 2 ** 20;
    return [
      {
        benchmark: `Authenticated sockets with one live query each, one server process`,
        result: `${formatCount(held.connections)} sockets, server RSS ${rssMb.toFixed(0)} MB`,
        goal: "~18,000",
        ok: held.connections >= 18_000,
        note: `${formatCount(SESSIONS)} sessions; ${formatCount(held.watches)} watches; opened in ${openSec.toFixed(1)} s from ${PROCESSES} processes (open-file limit 20,000 each)`,
      },
      {
        benchmark: "… server RSS per socket",
        result: `${((rss - rssBefore) / SOCKETS / 1024).toFixed(1)} KB`,
        note: `RSS growth from ${(rssBefore / 2 ** 20).toFixed(0)} MB before the first socket (garbage of the token minting included there, so a lower bound); total RSS ÷ sockets ${(rss / SOCKETS / 1024).toFixed(1)} KB (an upper bound)`,
      },
      {
        benchmark: `Revocation push with ${formatCount(held.connections)} sockets held`,
        result: `${formatNs(r.p99)} p99`,
        p50: formatNs(r.p50),
        p99: formatNs(r.p99),
        goal: "p99 ≤ 50 ms",
        ok: r.p99 <= 50_000_000,
        note: `HTTP delete sent → every socket of the session (${(tabs / r.n).toFixed(1)} tabs) got auth_error; ${r.n} revocations; server CPU ${formatNs(revokeCpu / r.n)} and ${executionsPerRevocation.toFixed(1)} query executions per revocation`,
      },
      {
        benchmark: "Idle server CPU (heartbeats + the 1 s sweep)",
        result: `${(idleCpuPerSec / 1e6).toFixed(1)} ms/s`,
        note: `${formatNs(idleCpuPerSec / SOCKETS)}/s per socket; every socket pings every ${HEARTBEAT_MS / 1000} s (the client's period), ${((idleCpuPerSec / 1e9) * 100).toFixed(1)}% of one core`,
      },
    ];
  },
};
