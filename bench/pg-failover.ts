/**
 * Failover time (issue 24, "Also in the table: … failover time"): a pg_auto_failover formation
 * (monitor, primary, synchronous standby; `test/helpers/pg-auto-failover.ts`, the helper of
 * `test/postgres/failover.test.ts`), three instances of the bench app on its multi-host URL
 * (`target_session_attrs=read-write`, default timeouts), writers on each. The primary is SIGKILLed
 * (keeper and postgres) under load; measured per instance: the time from the kill to the first 200
 * to a mutation sent after it, and what was answered meanwhile (typed 503s expected, nothing else).
 *
 * Needs `pg_autoctl` (Debian: `postgresql-15-auto-failover pg-auto-failover-cli`); without it the
 * group reports a skipped row.
 */
import { fileURLToPath } from "node:url";
import { autoFailoverAvailable, startFormation } from "../test/helpers/pg-auto-failover.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "./lib/spawn.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const ISSUER = "https://bench.pg-failover.test";
const AUDIENCE = "bench-pg-failover";
const INSTANCES = 3;
/** Concurrent writers per instance. */
const WRITERS = 4;
/** Give up waiting for every instance to answer 200 again after this long, ms. */
const RECOVERY_LIMIT_MS = 180_000;
const fixture = fileURLToPath(new URL("./fixtures/postgres-server.ts", import.meta.url));

/** What one instance answered after the kill. */
interface InstanceOutcome {
  /** ms from the kill to the first 200 to a mutation sent after it. */
  firstOkMs?: number;
  /** Answers other than 200 after the kill, by `status code`. */
  failures: Map<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(server: SpawnedServer, n: number): Promise<{ status: number; code?: string }> {
  try {
    const response = await fetch(`${server.url}/api/mutation`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: "bench:post", args: { channel: "failover", body: `message ${n}` } }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await response.json().catch(() => ({}))) as { code?: string };
    return { status: response.status, code: body.code };
  } catch (error) {
    // A crashed instance or a hung request: counted, never mistaken for a 503.
    return { status: 0, code: error instanceof Error ? error.name : "error" };
  }
}

export const pgFailover: BenchGroup = {
  title:
    "PostgreSQL failover (pg_auto_failover, synchronous standby): SIGKILL of the primary under write load",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    if (!autoFailoverAvailable) {
      return [{ benchmark: "failover time (skipped: pg_auto_failover not installed)", result: "n/a" }];
    }
    ctx.log("starting a pg_auto_failover formation (monitor, primary, synchronous standby)");
    const formation = await startFormation();
    ctx.defer(() => formation.stop());
    const { jwk } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = {
      BENCH_JWK: jwk,
      BENCH_ISSUER: ISSUER,
      BENCH_AUDIENCE: AUDIENCE,
      DATABASE_URL: formation.url,
    };
    const servers: SpawnedServer[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const server = await spawnServer(fixture, env, 120_000);
      ctx.defer(() => server.stop());
      servers.push(server);
    }
    const { primary } = await formation.stable();

    let stop = false;
    let killedAt: number | undefined;
    let acknowledged = 0;
    let sent = 0;
    const outcomes: InstanceOutcome[] = servers.map(() => ({ failures: new Map() }));
    const writer = async (i: number) => {
      while (!stop) {
        const started = Date.now();
        const answer = await post(servers[i], ++sent);
        if (answer.status === 200) {
          acknowledged++;
          // Only requests sent after the kill count: one in flight may have committed before it.
          if (killedAt !== undefined && started >= killedAt) outcomes[i].firstOkMs ??= Date.now() - killedAt;
          continue;
        }
        if (killedAt !== undefined) {
          const key = `${answer.status} ${answer.code ?? ""}`.trim();
          outcomes[i].failures.set(key, (outcomes[i].failures.get(key) ?? 0) + 1);
        }
        // A client backs off a little after a failure rather than spinning.
        await sleep(50);
      }
    };
    const writing = servers.flatMap((_, i) => Array.from({ length: WRITERS }, () => writer(i)));
    // The load is going: writes are acknowledged on every instance.
    const deadline = Date.now() + 60_000;
    while (acknowledged < 100 && Date.now() < deadline) await sleep(50);
    ctx.log(`SIGKILL of the primary (${primary.name}) after ${acknowledged} acknowledged writes`);
    killedAt = Date.now();
    await formation.kill(primary);
    const until = Date.now() + RECOVERY_LIMIT_MS;
    while (outcomes.some((o) => o.firstOkMs === undefined) && Date.now() < until) await sleep(50);
    stop = true;
    await Promise.all(writing);

    const times = outcomes.map((o) => o.firstOkMs);
    const recovered = times.every((ms) => ms !== undefined);
    const failures = new Map<string, number>();
    for (const o of outcomes)
      for (const [key, n] of o.failures) failures.set(key, (failures.get(key) ?? 0) + n);
    const unexpected = [...failures].filter(([key]) => key !== "503 DATABASE_UNAVAILABLE");
    const seconds = (ms: number | undefined) => (ms === undefined ? "never" : `${(ms / 1000).toFixed(1)} s`);
    const slowest = recovered ? Math.max(...(times as number[])) : undefined;
    return [
      {
        benchmark:
          "Failover: SIGKILL of the primary → first 200 on every instance (3 instances, writes under load)",
        result: recovered ? seconds(slowest) : `not within ${RECOVERY_LIMIT_MS / 1000} s`,
        goal: "every instance back by itself, only typed 503s meanwhile",
        ok: recovered && unexpected.length === 0,
        note:
          `per instance ${times.map(seconds).join(", ")}; ${failures.get("503 DATABASE_UNAVAILABLE") ?? 0} typed 503s` +
          (unexpected.length
            ? `; other answers: ${unexpected.map(([k, n]) => `${n}× ${k}`).join(", ")}`
            : "") +
          `; ${INSTANCES}×${WRITERS} writers, default timeouts, monitor health checks every 1 s`,
      },
    ];
  },
};
