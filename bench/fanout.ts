/**
 * Fan-out (issue 15, item 2): one write to a query that {@link SOCKETS} sockets watch. The server
 * (`fixtures/sync-server.ts`, the example app) runs in a child process, the sockets in
 * {@link PROCESSES} more (`lib/swarm.ts`), each from its own loopback address. Every socket
 * subscribes anonymously to the public `bench:feed`, so all share one execution. Per write: the
 * time from sending the mutation until the last socket has the update (arrival times are
 * CLOCK_MONOTONIC, comparable across processes), and how many times the query ran.
 *
 * Its floor in the same run (issue 27): a plain `ws` server (`fixtures/raw-fanout.ts`, its own
 * process) sending the same update bytes to as many sockets of another swarm of the same shape;
 * writes alternate between the two, one of ours then one of the floor's. Both are charged their
 * CPU time per write the same way (the process's own `cpuUsage`, read over HTTP before and after).
 */
import { fileURLToPath } from "node:url";
import { spawnServer } from "./lib/spawn.ts";
import { openSwarm, type Swarm } from "./lib/swarm.ts";
import { startSyncApp } from "./lib/sync-app.ts";
import { formatCount, formatNs, median, summarize } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const SOCKETS = Number(process.env.BENCH_FANOUT_SOCKETS ?? 10_000);
const PROCESSES = 4;
const WRITES = 30;
const WARMUP_WRITES = 3;
const floorFixture = fileURLToPath(new URL("./fixtures/raw-fanout.ts", import.meta.url));

/** One write's figures: latency to the last socket and the median socket (ns), server CPU (ns). */
interface WriteSample {
  last: number;
  median: number;
  cpuNs: number;
}

/** Arms `swarm` for a fresh marker, runs `write(marker)`, and charges it the server's CPU time. */
async function measureWrite(
  swarm: Swarm,
  cpuMicros: () => Promise<number>,
  write: (marker: string) => Promise<unknown>,
): Promise<WriteSample> {
  const marker = `fan-out ${Math.random()}`;
  const collect = await swarm.awaitMarker(marker);
  const before = await cpuMicros();
  const sent = Number(process.hrtime.bigint());
  await write(marker);
  const seen = await collect();
  const after = await cpuMicros();
  const latencies = seen.map((t) => t - sent);
  return { last: Math.max(...latencies), median: median(latencies), cpuNs: (after - before) * 1_000 };
}

export const fanout: BenchGroup = {
  title: `Fan-out: one write to a query watched by ${formatCount(SOCKETS)} sockets`,
  async run(ctx) {
    const { wsUrl, call } = await startSyncApp(ctx, { name: "fanout" });
    const stats = () =>
      call("action", "bench:stats", {}) as Promise<{ executions: number; cpuMicros: number }>;
    const [{ userId }] = (await call("mutation", "bench:createSessions", { prefix: "fan", n: 1 })) as {
      userId: string;
    }[];

    const floor = await spawnServer(floorFixture);
    ctx.defer(() => floor.stop());
    const floorCpu = async () =>
      ((await (await fetch(`${floor.url}/stats`)).json()) as { cpuMicros: number }).cpuMicros;

    const open = async (url: string, what: string) => {
      ctx.log(`opening ${formatCount(SOCKETS)} sockets to ${what} in ${PROCESSES} processes`);
      const t0 = process.hrtime.bigint();
      const swarm = await openSwarm({ url, sockets: SOCKETS, processes: PROCESSES, path: "bench:feed" });
      ctx.defer(() => swarm.close());
      if (swarm.size !== SOCKETS) throw new Error(`${what}: ${swarm.size} of ${SOCKETS} sockets opened`);
      return { swarm, openSec: Number(process.hrtime.bigint() - t0) / 1e9 };
    };
    const { swarm, openSec } = await open(wsUrl, "our server");
    const { swarm: floorSwarm } = await open(`ws://127.0.0.1:${floor.port}/api/sync`, "the floor");

    ctx.log(`${WRITES} writes to each, alternating, each awaited at every socket`);
    const ourWrites: WriteSample[] = [];
    const floorWrites: WriteSample[] = [];
    const runs: number[] = [];
    for (let i = -WARMUP_WRITES; i < WRITES; i++) {
      // The reactor's execution counter, read with the CPU time before and after the write.
      const executions: number[] = [];
      const ourCpu = async () => {
        const s = await stats();
        executions.push(s.executions);
        return s.cpuMicros;
      };
      const ours = await measureWrite(swarm, ourCpu, (body) =>
        call("mutation", "bench:post", { userId, body }),
      );
      const floors = await measureWrite(floorSwarm, floorCpu, (body) =>
        fetch(`${floor.url}/post`, { method: "POST", body: JSON.stringify({ body }) }).then((r) => {
          if (r.status !== 200) throw new Error(`the floor's /post answered ${r.status}`);
        }),
      );
      if (i < 0) continue;
      ourWrites.push(ours);
      floorWrites.push(floors);
      runs.push(executions[1] - executions[0]);
    }
    const l = summarize(ourWrites.map((w) => w.last));
    const fl = summarize(floorWrites.map((w) => w.last));
    const cpu = median(ourWrites.map((w) => w.cpuNs));
    const fcpu = median(floorWrites.map((w) => w.cpuNs));
    // Paired write by write (back to back), like the HTTP groups' per-round ratios.
    const cpuRatio = median(ourWrites.map((w, k) => w.cpuNs / floorWrites[k].cpuNs));
    const maxRuns = Math.max(...runs);
    const rows: BenchRow[] = [
      {
        benchmark: `Fan-out: write → last of ${formatCount(SOCKETS)} sockets has the update`,
        result: `${formatNs(l.p99)} p99`,
        p50: formatNs(l.p50),
        p99: formatNs(l.p99),
        goal: "p99 ≤ 100 ms",
        ok: l.p99 <= 100_000_000,
        note: `${l.n} writes (HTTP mutation sent → update at the last socket); median socket ${formatNs(median(ourWrites.map((w) => w.median)))}; sockets opened in ${openSec.toFixed(1)} s from ${PROCESSES} processes`,
      },
      {
        benchmark: `Floor: plain \`ws\` server, the same update bytes → last of ${formatCount(SOCKETS)} sockets`,
        result: `${formatNs(fl.p99)} p99`,
        p50: formatNs(fl.p50),
        p99: formatNs(fl.p99),
        note: `${fl.n} writes (HTTP POST sent → update at the last socket), alternating with ours; median socket ${formatNs(median(floorWrites.map((w) => w.median)))}; no database, one encoded frame for all`,
      },
      {
        benchmark: "Fan-out: server CPU time per write",
        result: `${formatNs(cpu)} median`,
        note: `${formatNs(cpu / SOCKETS)} per socket; the server's own cost, which the shared machine's load does not inflate (wall latency above does)`,
      },
      {
        benchmark: "Floor: server CPU time per write",
        result: `${formatNs(fcpu)} median`,
        note: `${formatNs(fcpu / SOCKETS)} per socket`,
      },
      {
        benchmark: "ratio: fan-out ÷ its floor (server CPU per socket)",
        result: `${cpuRatio.toFixed(2)}×`,
        goal: "≤ 1.5×",
        ok: cpuRatio <= 1.5,
        note: `median of per-write ratios; ours includes the mutation and the query's run (one per write), the floor neither`,
      },
      {
        benchmark: "Fan-out: query executions per write",
        result: `${median(runs)} (max ${maxRuns})`,
        goal: "1 (shared)",
        ok: maxRuns === 1,
        note: `every socket subscribed anonymously to the same public query; executions counted by the server's reactor`,
      },
    ];
    return rows;
  },
};
