/**
 * `hash` group: password hashing in email + password sign-in. The platform default (native scrypt
 * through node:crypto, in libuv's thread pool; `withAuthDefaults`) against Better Auth's own
 * default (@noble/hashes scrypt in JavaScript, on the event loop). Same parameters, so the cost of
 * the work is comparable; what differs is where it runs.
 *
 * Two Better Auth instances on the in-memory adapter, identical but for
 * `emailAndPassword.password`, each with one signed-up user:
 * 1. throughput: bursts of {@link BURST} concurrent `signInEmail` calls, interleaved rounds;
 * 2. event-loop delay (perf_hooks `monitorEventLoopDelay`) while a burst of {@link BURST}
 *    concurrent sign-ins runs: how long every other request of the process would wait.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type BetterAuthOptions, betterAuth } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { withAuthDefaults } from "service-auth/auth";
import { formatNs, interleave, median } from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const BURST = 20;
const ROUNDS = 5;
const EMAIL = "bench-hash@example.com";
const PASSWORD = "correct horse battery";

type Hasher = "native" | "betterAuth";

function makeAuth(hasher: Hasher) {
  const options = {
    baseURL: "http://127.0.0.1:3000",
    secret: "bench-hash-secret-bench-hash-secret-0123456789",
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    emailAndPassword: { enabled: true },
    logger: { disabled: true },
    telemetry: { enabled: false },
  } satisfies BetterAuthOptions;
  return betterAuth(hasher === "native" ? withAuthDefaults(options) : options);
}

type Auth = ReturnType<typeof makeAuth>;

async function signIn(auth: Auth): Promise<void> {
  const result = await auth.api.signInEmail({ body: { email: EMAIL, password: PASSWORD } });
  if (!result.token) throw new Error("sign-in returned no session");
}

/** Runs `BURST` sign-ins at once; returns the wall time (ns) and the event-loop delay seen meanwhile. */
async function burst(auth: Auth): Promise<{ wallNs: number; delayP99Ns: number; delayMaxNs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: BURST }, () => signIn(auth)));
  const wallNs = Number(process.hrtime.bigint() - start);
  histogram.disable();
  return { wallNs, delayP99Ns: histogram.percentile(99), delayMaxNs: histogram.max };
}

export const hash: BenchGroup = {
  title: `Password hashing in sign-in: native scrypt (thread pool) vs Better Auth's default (event loop), bursts of ${BURST}`,
  async run(ctx) {
    const auths: Record<Hasher, Auth> = { native: makeAuth("native"), betterAuth: makeAuth("betterAuth") };
    for (const auth of Object.values(auths)) {
      await auth.api.signUpEmail({ body: { email: EMAIL, password: PASSWORD, name: "Bench" } });
      await burst(auth); // warm-up
    }
    ctx.log(`${ROUNDS} interleaved rounds of ${BURST} concurrent sign-ins per hasher`);
    const rounds = await interleave(ROUNDS, {
      native: () => burst(auths.native),
      betterAuth: () => burst(auths.betterAuth),
    });

    const perSec = (h: Hasher) => median(rounds[h].map((r) => BURST / (r.wallNs / 1e9)));
    const delayP99 = (h: Hasher) => median(rounds[h].map((r) => r.delayP99Ns));
    const delayMax = (h: Hasher) => Math.max(...rounds[h].map((r) => r.delayMaxNs));
    const label: Record<Hasher, string> = {
      native: "native scrypt (node:crypto)",
      betterAuth: "Better Auth default (@noble/hashes)",
    };
    const rows: BenchRow[] = [];
    for (const h of ["native", "betterAuth"] as const) {
      rows.push({
        benchmark: `sign-in throughput, ${label[h]}`,
        result: `${perSec(h).toFixed(1)} sign-ins/s`,
        note: `median of ${ROUNDS} bursts of ${BURST}`,
      });
    }
    for (const h of ["native", "betterAuth"] as const) {
      rows.push({
        benchmark: `event-loop delay during ${BURST} concurrent sign-ins, ${label[h]}`,
        result: `p99 ${formatNs(delayP99(h))}`,
        p99: formatNs(delayP99(h)),
        note: `max ${formatNs(delayMax(h))} over ${ROUNDS} bursts`,
      });
    }
    rows.push({
      benchmark: "event-loop delay p99, Better Auth default / native",
      result: `${(delayP99("betterAuth") / delayP99("native")).toFixed(1)}×`,
      goal: "> 1×",
      ok: delayP99("betterAuth") > delayP99("native"),
    });
    return rows;
  },
};
