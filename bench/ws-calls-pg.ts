/**
 * What "revocation on the next request" costs a WebSocket call on PostgreSQL: before a call runs
 * as the connection's identity it waits for a catch-up round of the commit log
 * (`ConnectionIdentity.whenCurrent`). Two services in this process on one throwaway PostgreSQL, one
 * with the check (the default) and one with `crossInstanceCheck: false` (no catch-up); authenticated
 * raw protocol sockets send `bench:me` (a cached identity and one read), in interleaved rounds.
 *
 * 1. One call at a time on one socket: round-trip latency, medians.
 * 2. {@link SOCKETS} sockets × {@link IN_FLIGHT} calls in flight each: calls per second (rounds of
 *    the catch-up are shared by every call that arrives before one starts).
 */
import WebSocket from "ws";
import { type RuntimeRunningService, startRuntimeService } from "../src/backend/service.ts";
import { PostgresEngine } from "../src/backend/storage/postgres/engine.ts";
import { authConfig, modules, schema } from "./fixtures/postgres-app.ts";
import { startBenchPostgres } from "./lib/postgres-db.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
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

const ISSUER = "https://bench.ws-calls.test";
const AUDIENCE = "bench-ws-calls";
const ROUNDS = 5;
const SEQUENTIAL_CALLS = 1_000;
const SOCKETS = 8;
const IN_FLIGHT = 16;
const CONCURRENT_CALLS = 4_000;

/** A raw protocol socket answering calls by id. */
class CallSocket {
  private next = 0;
  private readonly waiting = new Map<number, (m: any) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const m = JSON.parse(String(data));
      if (m.type === "result") {
        this.waiting.get(m.id)?.(m);
        this.waiting.delete(m.id);
      }
    });
  }

  static async connect(url: string, token: string): Promise<CallSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const connected = new Promise<any>((resolve) =>
      ws.once("message", (data) => resolve(JSON.parse(String(data)))),
    );
    ws.send(JSON.stringify({ type: "connect", v: 1, token }));
    const m = await connected;
    if (!m.authenticated) throw new Error(`not authenticated: ${JSON.stringify(m)}`);
    return new CallSocket(ws);
  }

  /** `bench:me`; rejects unless it answered a value. */
  me(): Promise<void> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (m) => (m.error ? reject(new Error(JSON.stringify(m.error))) : resolve()));
      this.ws.send(JSON.stringify({ type: "query", id, path: "bench:me", args: {} }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** `total` calls over `sockets`, at most `inFlight` per socket at once; resolves with calls/s. */
async function callsPerSecond(sockets: CallSocket[], inFlight: number, total: number): Promise<number> {
  let left = total;
  const start = process.hrtime.bigint();
  const worker = async (s: CallSocket) => {
    while (left > 0) {
      left--;
      await s.me();
    }
  };
  await Promise.all(sockets.flatMap((s) => Array.from({ length: inFlight }, () => worker(s))));
  return total / (Number(process.hrtime.bigint() - start) / 1e9);
}

export const wsCallsPg: BenchGroup = {
  title: "PostgreSQL: the per-call catch-up of WebSocket calls (revocation on the next request)",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const databaseUrl = await startBenchPostgres(ctx);
    const { jwk, sign } = await rs256Tokens(ISSUER, AUDIENCE);

    const urls: Record<"checked" | "unchecked", string> = { checked: "", unchecked: "" };
    const services: RuntimeRunningService[] = [];
    for (const [name, crossInstanceCheck] of [
      ["checked", true],
      ["unchecked", false],
    ] as const) {
      const service = await startRuntimeService({
        schema,
        modules,
        auth: authConfig(jwk, ISSUER, AUDIENCE),
        port: 0,
        hostname: "127.0.0.1",
        engine: new PostgresEngine({ connectionString: databaseUrl, crossInstanceCheck }),
      });
      ctx.defer(() => service.close());
      urls[name] = `ws://127.0.0.1:${service.port}/api/sync`;
      services.push(service);
    }
    const created = await services[0].backend.runMutation("bench:createSession", {});
    const { userId, sessionId } = created.value as { userId: string; sessionId: string };
    const token = await sign(userId, sessionId);

    const sockets: Record<string, CallSocket[]> = {};
    for (const [name, url] of Object.entries(urls)) {
      sockets[name] = await Promise.all(
        Array.from({ length: SOCKETS }, () => CallSocket.connect(url, token)),
      );
      ctx.defer(() => {
        for (const s of sockets[name]) s.close();
      });
    }
    ctx.log("warming up");
    for (const name of Object.keys(urls)) {
      await sampleAsync(500, () => sockets[name][0].me());
      await callsPerSecond(sockets[name], IN_FLIGHT, CONCURRENT_CALLS / 4);
    }

    ctx.log(`one at a time: ${ROUNDS} interleaved rounds of ${SEQUENTIAL_CALLS} calls`);
    const sequential = await interleave<number[]>(ROUNDS, {
      checked: () => sampleAsync(SEQUENTIAL_CALLS, () => sockets.checked[0].me()),
      unchecked: () => sampleAsync(SEQUENTIAL_CALLS, () => sockets.unchecked[0].me()),
    });
    ctx.log(`concurrent: ${ROUNDS} interleaved rounds of ${CONCURRENT_CALLS} calls`);
    const concurrent = await interleave<number>(ROUNDS, {
      checked: () => callsPerSecond(sockets.checked, IN_FLIGHT, CONCURRENT_CALLS),
      unchecked: () => callsPerSecond(sockets.unchecked, IN_FLIGHT, CONCURRENT_CALLS),
    });

    const checked = summarize(sequential.checked.flat());
    const unchecked = summarize(sequential.unchecked.flat());
    const ratio = median(concurrent.checked.map((c, i) => c / concurrent.unchecked[i]));
    return [
      {
        benchmark: "WebSocket `bench:me`, one at a time, with the catch-up",
        result: `${formatNs(checked.p50)} median`,
        p50: formatNs(checked.p50),
        p99: formatNs(checked.p99),
      },
      {
        benchmark: "same, `crossInstanceCheck: false`",
        result: `${formatNs(unchecked.p50)} median`,
        p50: formatNs(unchecked.p50),
        p99: formatNs(unchecked.p99),
      },
      {
        benchmark: `WebSocket calls/s, ${SOCKETS} sockets × ${IN_FLIGHT} in flight, with the catch-up`,
        result: `${formatCount(median(concurrent.checked))} calls/s`,
      },
      {
        benchmark: "same, `crossInstanceCheck: false`",
        result: `${formatCount(median(concurrent.unchecked))} calls/s`,
      },
      {
        benchmark: "calls/s with ÷ without",
        result: formatRatio(ratio),
        note: "median of the per-round ratios",
      },
    ];
  },
};
