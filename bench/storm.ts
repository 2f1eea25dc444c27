/**
 * `storm` group: what a burst of sign-ins does to everyone else on the server (issue 11,
 * "Performance"). On the example app in a child process (rate limits off: the load comes from one
 * address), authenticated `POST /api/query` of `users:me` from {@link LOAD_DEFAULTS} connections
 * sending back to back, p99:
 *
 * - idle: nothing else running;
 * - storm: while {@link STORM} clients sign in back to back (each starts its next sign-in when the
 *   last one answered, so {@link STORM} password checks are always in flight).
 *
 * Once with the platform's native scrypt (node:crypto, libuv thread pool; the default) and once
 * with Better Auth's default hasher (JavaScript scrypt on the event loop). Goal: storm p99 within
 * 2× idle p99 with the native hasher. Rounds interleaved, medians.
 *
 * The queries are timed here rather than by autocannon: with Better Auth's hasher a query can
 * wait longer than a whole round, and autocannon drops requests still in flight at the end (a
 * round could then report nothing). Here every request sent is awaited and timed.
 */
import { fileURLToPath } from "node:url";
import { PASSWORD, signUp } from "./fixtures/auth-app.ts";
import { LOAD_DEFAULTS } from "./lib/load.ts";
import { spawnServer } from "./lib/spawn.ts";
import { formatCount, formatNs, interleave, median, percentile } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const STORM = 20;
const ROUNDS = 3;
const WARMUP_SEC = 2;
const GOAL = 2;

type Hasher = "native" | "betterAuth";
const LABEL: Record<Hasher, string> = {
  native: "native scrypt (default)",
  betterAuth: "Better Auth default hasher",
};

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** {@link STORM} clients signing in back to back until `stop()`; resolves with the sign-ins done. */
function startStorm(url: string, email: string): { stop(): Promise<number> } {
  let running = true;
  let done = 0;
  const client = async () => {
    while (running) {
      const response = await fetch(`${url}/api/auth/sign-in/email`, {
        method: "POST",
        headers: { origin: url, "content-type": "application/json" },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`sign-in during the storm answered ${response.status}`);
      done++;
    }
  };
  const clients = Promise.all(Array.from({ length: STORM }, client));
  return {
    async stop() {
      running = false;
      await clients;
      return done;
    },
  };
}

/** One round of queries: latencies (ns) and throughput. */
interface QueryRound {
  latenciesNs: number[];
  requestsPerSec: number;
}

/**
 * `connections` clients each sending the query back to back for `durationSec`; requests in flight
 * at the end are awaited and counted. Throws on any answer but 200 (a broken target is not fast).
 */
async function queryRound(url: string, token: string, durationSec: number): Promise<QueryRound> {
  const body = JSON.stringify({ path: "users:me", args: {} });
  const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
  const latenciesNs: number[] = [];
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(durationSec * 1e9);
  const client = async () => {
    while (process.hrtime.bigint() < deadline) {
      const sent = process.hrtime.bigint();
      const response = await fetch(`${url}/api/query`, { method: "POST", headers, body });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`users:me answered ${response.status}`);
      latenciesNs.push(Number(process.hrtime.bigint() - sent));
    }
  };
  await Promise.all(Array.from({ length: LOAD_DEFAULTS.connections }, client));
  const wallSec = Number(process.hrtime.bigint() - start) / 1e9;
  return { latenciesNs, requestsPerSec: latenciesNs.length / wallSec };
}

interface Measured {
  idle: QueryRound[];
  storm: QueryRound[];
  /** Sign-ins per second during the storm rounds. */
  signInsPerSec: number[];
}

async function measure(ctx: BenchContext, hasher: Hasher): Promise<Measured> {
  const dataDir = await ctx.tempDir(`bench-storm-${hasher}-`);
  ctx.log(`starting the example app server (${LABEL[hasher]})`);
  const server = await spawnServer(fixture("storm-server.ts"), {
    BENCH_DATA_DIR: dataDir,
    BENCH_HASHER: hasher,
    AUTH_RATE_LIMIT: "off",
  });
  ctx.defer(() => server.stop());
  try {
    const email = `bench-storm-${hasher}@example.com`;
    const user = await signUp(server.url, email);
    const query = (durationSec: number) => queryRound(server.url, user.token, durationSec);
    const signInsPerSec: number[] = [];
    const underStorm = async (durationSec: number) => {
      const storm = startStorm(server.url, email);
      const start = process.hrtime.bigint();
      try {
        return await query(durationSec);
      } finally {
        const done = await storm.stop();
        signInsPerSec.push(done / (Number(process.hrtime.bigint() - start) / 1e9));
      }
    };
    ctx.log("warming up");
    await query(WARMUP_SEC);
    await underStorm(WARMUP_SEC);
    signInsPerSec.length = 0;
    ctx.log(
      `measuring ${ROUNDS} interleaved rounds of ${LOAD_DEFAULTS.durationSec} s, idle and under the storm`,
    );
    const rounds = await interleave<QueryRound>(ROUNDS, {
      idle: () => query(LOAD_DEFAULTS.durationSec),
      storm: () => underStorm(LOAD_DEFAULTS.durationSec),
    });
    return { idle: rounds.idle, storm: rounds.storm, signInsPerSec };
  } finally {
    await server.stop();
  }
}

export const storm: BenchGroup = {
  title: `Authenticated /api/query p99 while ${STORM} clients sign in back to back, native vs Better Auth's hasher`,
  async run(ctx) {
    const rows: BenchRow[] = [];
    for (const hasher of ["native", "betterAuth"] as const) {
      const m = await measure(ctx, hasher);
      const p99 = (rounds: QueryRound[]) => median(rounds.map((r) => percentile(r.latenciesNs, 99)));
      const p50 = (rounds: QueryRound[]) => median(rounds.map((r) => percentile(r.latenciesNs, 50)));
      const rps = (rounds: QueryRound[]) => median(rounds.map((r) => r.requestsPerSec));
      const ratio = p99(m.storm) / p99(m.idle);
      rows.push(
        {
          benchmark: `users:me idle, ${LABEL[hasher]}`,
          result: `${formatCount(rps(m.idle))} req/s`,
          p50: formatNs(p50(m.idle)),
          p99: formatNs(p99(m.idle)),
          note: `median of ${ROUNDS} rounds`,
        },
        {
          benchmark: `users:me during ${STORM} concurrent sign-ins, ${LABEL[hasher]}`,
          result: `${formatCount(rps(m.storm))} req/s`,
          p50: formatNs(p50(m.storm)),
          p99: formatNs(p99(m.storm)),
          note: `${median(m.signInsPerSec).toFixed(1)} sign-ins/s meanwhile`,
        },
        {
          benchmark: `p99 storm / idle, ${LABEL[hasher]}`,
          result: `${ratio.toFixed(1)}×`,
          ...(hasher === "native" ? { goal: `≤ ${GOAL}×`, ok: ratio <= GOAL } : {}),
        },
      );
    }
    return rows;
  },
};
