/**
 * Authentication costs (issue 3, "Performance") on the example app with static RS256 keys:
 *
 * 1. HTTP: authenticated `POST /api/query` of `users:me` (bearer JWT: step 1 RS256 verify, step 2
 *    user + session lookup) vs the unauthenticated `bench:userById` reading the same document,
 *    and vs Better Auth's own session check `GET /api/auth/get-session` (session cookie) on the
 *    same server. Server in a child process, autocannon here, rounds interleaved, medians.
 * 2. In-process (after the server stopped): node:crypto's RS256 verify alone (the floor of step 1),
 *    `backend.authenticate(token)` (steps 1+2, goal ≤ 2× the floor; the two called alternately,
 *    and each also in batches of its own), the same
 *    steps inside `runQuery` (with token minus without), the two HTTP calls above through the
 *    function endpoint's handler without a socket (called alternately, so a busy machine's drifts
 *    hit both alike: the HTTP ratio's in-process counterpart), `auth.api.getSession({ headers })`,
 *    and one Better Auth adapter `findOne` through `httpAdapter` vs the direct adapter in a query.
 */
import { createPublicKey, verify as cryptoVerify, type KeyObject } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createAuth } from "../examples/app/auth.ts";
import { handleFunctionCall } from "../src/backend/http/function-call.ts";
import type { BackendRuntime } from "../src/backend/runtime.ts";
import { type SignedUp, signUp, startAuthService } from "./fixtures/auth-app.ts";
import { LOAD_DEFAULTS, type LoadResult, runLoad } from "./lib/load.ts";
import { spawnServer } from "./lib/spawn.ts";
import {
  formatCount,
  formatNs,
  formatRatio,
  interleave,
  median,
  sampleAsync,
  summarize,
} from "./lib/timing.ts";
import type { BenchGroup, BenchRow } from "./lib/types.ts";

const ROUNDS = 3;
const WARMUP_SEC = 2;
const IN_PROCESS_ROUNDS = 5;
const FAST_CALLS = 2_000;
const SESSION_CALLS = 150;

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

type Target = "authed" | "public" | "getSession";

/** HTTP part: three targets on one child server; returns the per-round load results. */
async function measureHttp(ctx: Parameters<BenchGroup["run"]>[0]): Promise<Record<Target, LoadResult[]>> {
  const dataDir = await ctx.tempDir("bench-auth-http-");
  ctx.log("starting the example app server");
  const server = await spawnServer(fixture("auth-server.ts"), { BENCH_DATA_DIR: dataDir });
  ctx.defer(() => server.stop());
  try {
    const user = await signUp(server.url, "bench-http@example.com");
    const meBody = JSON.stringify({ path: "users:me", args: {} });
    const publicBody = JSON.stringify({ path: "bench:userById", args: { userId: user.userId } });
    const sessionUrl = `${server.url}/api/auth/get-session`;
    await checkHttp(server.url, user, meBody, publicBody);

    const targets: Record<Target, (durationSec: number) => Promise<LoadResult>> = {
      authed: (durationSec) =>
        runLoad({
          url: `${server.url}/api/query`,
          method: "POST",
          bodies: [meBody],
          headers: { authorization: `Bearer ${user.token}` },
          durationSec,
        }),
      public: (durationSec) =>
        runLoad({ url: `${server.url}/api/query`, method: "POST", bodies: [publicBody], durationSec }),
      getSession: (durationSec) =>
        runLoad({ url: sessionUrl, headers: { cookie: user.cookie }, durationSec }),
    };
    ctx.log("warming up");
    for (const run of Object.values(targets)) await run(WARMUP_SEC);
    ctx.log(`measuring ${ROUNDS} interleaved rounds of ${LOAD_DEFAULTS.durationSec} s per target`);
    return await interleave<LoadResult>(ROUNDS, {
      authed: () => targets.authed(LOAD_DEFAULTS.durationSec),
      public: () => targets.public(LOAD_DEFAULTS.durationSec),
      getSession: () => targets.getSession(LOAD_DEFAULTS.durationSec),
    });
  } finally {
    // The in-process part must not share the CPUs with an idle-but-alive server's GC.
    await server.stop();
  }
}

/** Every target answers what it should before any load runs (a broken target is not a fast one). */
async function checkHttp(url: string, user: SignedUp, meBody: string, publicBody: string): Promise<void> {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/query`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
  const me = (await (await post(meBody, { authorization: `Bearer ${user.token}` })).json()) as {
    value?: { _id?: string };
  };
  if (me.value?._id !== user.userId) throw new Error(`users:me answered ${JSON.stringify(me)}`);
  const anonymous = await post(meBody);
  if (anonymous.status !== 401) throw new Error(`users:me without a token answered ${anonymous.status}`);
  const pub = (await (await post(publicBody)).json()) as { value?: { _id?: string } };
  if (pub.value?._id !== user.userId) throw new Error(`bench:userById answered ${JSON.stringify(pub)}`);
  const session = (await (
    await fetch(`${url}/api/auth/get-session`, { headers: { cookie: user.cookie } })
  ).json()) as {
    user?: { id?: string };
  } | null;
  if (session?.user?.id !== user.userId) throw new Error(`get-session answered ${JSON.stringify(session)}`);
}

interface InProcess {
  rs256Floor: number[];
  /** The floor and uncached `authenticate`, called alternately (one of each per step). */
  floorPaired: number[];
  authenticatePaired: number[];
  authedCall: number[];
  publicCall: number[];
  authenticate: number[];
  authenticateCached: number[];
  authedQuery: number[];
  publicQuery: number[];
  getSessionFresh: number[];
  getSessionReused: number[];
  httpFindOne: number[];
  directFindOne: number[];
}

/** In-process part: the calls one at a time on the fixture app in this process. */
async function measureInProcess(
  ctx: Parameters<BenchGroup["run"]>[0],
): Promise<{ samples: InProcess; rounds: Record<keyof InProcess, number[][]> }> {
  const dataDir = await ctx.tempDir("bench-auth-proc-");
  const service = await startAuthService(dataDir);
  ctx.defer(() => service.close());
  const backend: BackendRuntime = service.backend;
  const user = await signUp(service.url, "bench-proc@example.com");
  const headers = new Headers({ cookie: user.cookie });
  const actionCtx = () => backend.actionCtx({}, false);
  const reusedAuth = createAuth(await actionCtx());
  const adapter = (await createAuth(await actionCtx()).$context).adapter;
  const where = [{ field: "id", value: user.userId }];

  const floor = rs256Floor(backend, user.token);
  const calls = functionCalls(backend, user);
  const cases = {
    // The floor of step 1: node:crypto's RS256 verification alone, on the same token and key.
    rs256Floor: async () => {
      if (!floor()) throw new Error("RS256 floor: signature did not verify");
    },
    authenticate: async () => {
      // Uncached: RS256 verification and the session + user reads every time.
      backend.forgetIdentities();
      const { identity } = await backend.authenticate(user.token);
      if (identity.subject !== user.userId) throw new Error("authenticate returned another user");
    },
    authenticateCached: async () => {
      const { identity } = await backend.authenticate(user.token);
      if (identity.subject !== user.userId) throw new Error("authenticate returned another user");
    },
    authedQuery: async () => {
      const { value } = await backend.runQuery("users:me", {}, { token: user.token });
      if (!value) throw new Error("users:me returned nothing");
    },
    publicQuery: async () => {
      const { value } = await backend.runQuery("bench:userById", { userId: user.userId });
      if (!value) throw new Error("bench:userById returned nothing");
    },
    // As the server does per request: a Better Auth instance per action ctx, then the check.
    getSessionFresh: async () => {
      const session = await createAuth(await actionCtx()).api.getSession({ headers });
      if (session?.user.id !== user.userId) throw new Error("getSession returned no session");
    },
    getSessionReused: async () => {
      const session = await reusedAuth.api.getSession({ headers });
      if (session?.user.id !== user.userId) throw new Error("getSession returned no session");
    },
    httpFindOne: async () => {
      if (!(await adapter.findOne({ model: "user", where })))
        throw new Error("httpAdapter findOne found no user");
    },
  };
  const pairedCalls = async (n: number) => {
    const authed: number[] = [];
    const anonymous: number[] = [];
    for (let i = 0; i < n; i++) {
      let start = process.hrtime.bigint();
      await calls.authed();
      authed.push(Number(process.hrtime.bigint() - start));
      start = process.hrtime.bigint();
      await calls.anonymous();
      anonymous.push(Number(process.hrtime.bigint() - start));
    }
    return { authed, anonymous };
  };
  // The ratio's pair called alternately too: in batches of their own, the floor's loop runs with
  // the crypto code and data hot in the caches, which no verification inside a request has, and
  // on a busy machine the two batches' medians come from different moments (2–5× apart).
  const pairedFloor = async (n: number) => {
    const floorNs: number[] = [];
    const authNs: number[] = [];
    for (let i = 0; i < n; i++) {
      let start = process.hrtime.bigint();
      await cases.rs256Floor();
      floorNs.push(Number(process.hrtime.bigint() - start));
      start = process.hrtime.bigint();
      await cases.authenticate();
      authNs.push(Number(process.hrtime.bigint() - start));
    }
    return { floorNs, authNs };
  };
  const direct = async (n: number) =>
    (await backend.runQuery("bench:directFindOne", { userId: user.userId, n }, { allowInternal: true }))
      .value as number[];

  ctx.log("in-process warm-up");
  for (const [name, fn] of Object.entries(cases))
    await sampleAsync(name.startsWith("getSession") ? 50 : 1_000, fn);
  await direct(1_000);
  await pairedCalls(1_000);
  await pairedFloor(1_000);

  ctx.log(`in-process: ${IN_PROCESS_ROUNDS} interleaved rounds`);
  const rounds = await interleave(IN_PROCESS_ROUNDS, {
    rs256Floor: () => sampleAsync(FAST_CALLS, cases.rs256Floor),
    authenticate: () => sampleAsync(FAST_CALLS, cases.authenticate),
    authenticateCached: () => sampleAsync(FAST_CALLS, cases.authenticateCached),
    authedQuery: () => sampleAsync(FAST_CALLS, cases.authedQuery),
    publicQuery: () => sampleAsync(FAST_CALLS, cases.publicQuery),
    getSessionFresh: () => sampleAsync(SESSION_CALLS, cases.getSessionFresh),
    getSessionReused: () => sampleAsync(SESSION_CALLS, cases.getSessionReused),
    httpFindOne: () => sampleAsync(FAST_CALLS, cases.httpFindOne),
    directFindOne: () => direct(FAST_CALLS),
  });
  // Its own rounds: the two calls alternate call by call, which already pairs them against drifts.
  const paired = await interleave(IN_PROCESS_ROUNDS, { calls: () => pairedCalls(FAST_CALLS) });
  const pairedAuth = await interleave(IN_PROCESS_ROUNDS, { floor: () => pairedFloor(FAST_CALLS) });
  const byRound = {
    ...rounds,
    authedCall: paired.calls.map((r) => r.authed),
    publicCall: paired.calls.map((r) => r.anonymous),
    floorPaired: pairedAuth.floor.map((r) => r.floorNs),
    authenticatePaired: pairedAuth.floor.map((r) => r.authNs),
  };
  const samples = Object.fromEntries(Object.entries(byRound).map(([k, v]) => [k, v.flat()]));
  return { samples: samples as unknown as InProcess, rounds: byRound as Record<keyof InProcess, number[][]> };
}

/**
 * The two HTTP targets' calls through the function endpoint's handler, without a socket: `users:me`
 * with the bearer header (a new string per call, as a request brings it) and `bench:userById`.
 */
function functionCalls(backend: BackendRuntime, user: SignedUp) {
  const authorization = Buffer.from(`Bearer ${user.token}`, "latin1");
  const meBody = Buffer.from(JSON.stringify({ path: "users:me", args: {} }));
  const publicBody = Buffer.from(JSON.stringify({ path: "bench:userById", args: { userId: user.userId } }));
  const meta = { clientIp: "127.0.0.1", userAgent: "bench" };
  const expectOk = (response: { status: number; body: string }) => {
    if (response.status !== 200 || !response.body.includes(user.userId))
      throw new Error(`function call answered ${response.status}: ${response.body.slice(0, 200)}`);
  };
  return {
    authed: async () =>
      expectOk(
        await handleFunctionCall(backend, {
          kind: "query",
          body: meBody,
          headers: { authorization: authorization.toString("latin1") },
          meta,
        }),
      ),
    anonymous: async () =>
      expectOk(await handleFunctionCall(backend, { kind: "query", body: publicBody, headers: {}, meta })),
  };
}

/**
 * A check of `token`'s RS256 signature with node:crypto and nothing else (key imported once,
 * segments decoded once): what step 1 cannot go below.
 */
function rs256Floor(backend: BackendRuntime, token: string): () => boolean {
  const [header, payload, signature] = token.split(".");
  const { kid } = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { kid?: string };
  const rows = JSON.parse(backend.env.get("JWKS") ?? "[]") as { id: string; publicKey: string }[];
  const row = rows.find((r) => r.id === kid);
  if (!row) throw new Error("RS256 floor: the token's key is not in JWKS");
  const key: KeyObject = createPublicKey({ key: JSON.parse(row.publicKey), format: "jwk" });
  const data = Buffer.from(`${header}.${payload}`, "latin1");
  const sig = Buffer.from(signature, "base64url");
  return () => cryptoVerify("sha256", data, key, sig);
}

export const auth: BenchGroup = {
  title: "Authentication: JWT + session check vs unauthenticated and vs Better Auth getSession",
  async run(ctx) {
    const http = await measureHttp(ctx);
    const { samples: proc, rounds: procRounds } = await measureInProcess(ctx);

    const rps = (t: Target) => median(http[t].map((r) => r.requestsPerSec));
    const ms = (t: Target, key: "latencyP50Ms" | "latencyP99Ms") => {
      const value = median(http[t].map((r) => r[key]));
      return value < 1 ? "< 1 ms" : `${value} ms`;
    };
    // Pairs the runs of the same round, then takes the median over rounds.
    const ratio = (a: Target, b: Target) =>
      median(http[a].map((r, i) => r.requestsPerSec / http[b][i].requestsPerSec));
    const authedVsPublic = ratio("authed", "public");
    const authedVsSession = ratio("authed", "getSession");

    const s = Object.fromEntries(Object.entries(proc).map(([k, v]) => [k, summarize(v)])) as Record<
      keyof InProcess,
      ReturnType<typeof summarize>
    >;
    const inQuery = s.authedQuery.p50 - s.publicQuery.p50;
    const floorRatio = median(
      procRounds.authenticatePaired.map((r, i) => median(r) / median(procRounds.floorPaired[i])),
    );
    const batchFloorRatio = median(
      procRounds.authenticate.map((r, i) => median(r) / median(procRounds.rs256Floor[i])),
    );
    const callRatio = median(
      procRounds.publicCall.map((r, i) => median(r) / median(procRounds.authedCall[i])),
    );
    const adapterOverhead = s.httpFindOne.p50 - s.directFindOne.p50;
    const settings = `${LOAD_DEFAULTS.connections} connections, ${ROUNDS}×${LOAD_DEFAULTS.durationSec} s`;
    const latency = (name: keyof InProcess) => ({ p50: formatNs(s[name].p50), p99: formatNs(s[name].p99) });

    const rows: BenchRow[] = [
      {
        benchmark: "`POST /api/query` users:me, bearer JWT (steps 1+2)",
        result: `${formatCount(rps("authed"))} req/s`,
        p50: ms("authed", "latencyP50Ms"),
        p99: ms("authed", "latencyP99Ms"),
        note: settings,
      },
      {
        benchmark: "`POST /api/query` bench:userById, no token (same read)",
        result: `${formatCount(rps("public"))} req/s`,
        p50: ms("public", "latencyP50Ms"),
        p99: ms("public", "latencyP99Ms"),
        note: "public query reading the same user document",
      },
      {
        benchmark: "Better Auth `GET /api/auth/get-session` (session cookie)",
        result: `${formatCount(rps("getSession"))} req/s`,
        p50: ms("getSession", "latencyP50Ms"),
        p99: ms("getSession", "latencyP99Ms"),
        note: "same server; includes the backend plugin's JWT cookie refresh",
      },
      {
        benchmark: "ratio: authenticated ÷ unauthenticated query",
        result: formatRatio(authedVsPublic),
        // Issue 27: a cached identity costs ~2 µs in-process; HTTP should lose at most 15 % to it.
        goal: "≥ 85%",
        ok: authedVsPublic >= 0.85,
        note: "median of per-round ratios",
      },
      {
        benchmark: "ratio: authenticated query ÷ get-session",
        result: `${authedVsSession.toFixed(1)}×`,
        goal: "≥ 30×",
        ok: authedVsSession >= 30,
        note: "median of per-round ratios",
      },
      {
        benchmark: "in-process RS256 verify with node:crypto (the floor of step 1)",
        result: `${formatNs(s.floorPaired.p50)} median`,
        ...latency("floorPaired"),
        note: `${s.floorPaired.n} calls alternating with the next row's, same token and 2048-bit key, \`crypto.verify\` alone; ${formatNs(s.rs256Floor.p50)} median in batches of its own`,
      },
      {
        benchmark: "in-process `backend.authenticate(token)` uncached (RS256 + user + session)",
        result: `${formatNs(s.authenticatePaired.p50)} median`,
        ...latency("authenticatePaired"),
        goal: "median < 40 µs",
        ok: s.authenticatePaired.p50 < 40_000,
        note: `${s.authenticatePaired.n} calls alternating with the floor's, identity cache cleared before each; ${formatNs(s.authenticate.p50)} median in batches of its own`,
      },
      {
        benchmark: "ratio: uncached `authenticate` ÷ RS256 floor",
        result: `${floorRatio.toFixed(2)}×`,
        goal: "≤ 2×",
        ok: floorRatio <= 2,
        note: "called alternately; median of per-round ratios of medians",
      },
      {
        benchmark: "ratio: the same, each in batches of its own",
        result: `${batchFloorRatio.toFixed(2)}×`,
        note: "as measured until 2026-11-27: the floor's loop keeps its code and data in the caches; swings with the load",
      },
      {
        benchmark: "in-process `backend.authenticate(token)` repeated token (identity cache hit)",
        result: `${formatNs(s.authenticateCached.p50)} median`,
        ...latency("authenticateCached"),
        note: `${s.authenticateCached.n} calls; what a client re-sending its JWT costs`,
      },
      {
        benchmark: "in-process steps 1+2 inside runQuery (users:me with token − bench:userById)",
        result: formatNs(inQuery),
        note: `medians ${formatNs(s.authedQuery.p50)} − ${formatNs(s.publicQuery.p50)}; p99 ${formatNs(s.authedQuery.p99)} vs ${formatNs(s.publicQuery.p99)}`,
      },
      {
        benchmark: "in-process function call users:me with bearer JWT (HTTP handler, no socket)",
        result: `${formatNs(s.authedCall.p50)} median`,
        ...latency("authedCall"),
        note: `${s.authedCall.n} calls, alternating with the next row's; a new header string per call`,
      },
      {
        benchmark: "in-process function call bench:userById, no token (same read)",
        result: `${formatNs(s.publicCall.p50)} median`,
        ...latency("publicCall"),
        note: `${s.publicCall.n} calls`,
      },
      {
        benchmark: "ratio: in-process authenticated ÷ unauthenticated call (as throughput)",
        result: formatRatio(callRatio),
        goal: "≥ 85%",
        ok: callRatio >= 0.85,
        note: "the HTTP ratio without sockets or the load generator; median of per-round ratios of medians",
      },
      {
        benchmark: "in-process `auth.api.getSession({ headers })`, instance per call",
        result: `${formatNs(s.getSessionFresh.p50)} median`,
        ...latency("getSessionFresh"),
        note: `${s.getSessionFresh.n} calls; createAuth(ctx) per call as the HTTP route does; ${(s.getSessionFresh.p50 / s.authenticate.p50).toFixed(0)}× authenticate`,
      },
      {
        benchmark: "in-process `auth.api.getSession({ headers })`, one instance",
        result: `${formatNs(s.getSessionReused.p50)} median`,
        ...latency("getSessionReused"),
        note: `${s.getSessionReused.n} calls; ${(s.getSessionReused.p50 / s.authenticate.p50).toFixed(0)}× authenticate`,
      },
      {
        benchmark: "adapter findOne via `httpAdapter` (ctx.runQuery of auth:findOne)",
        result: `${formatNs(s.httpFindOne.p50)} median`,
        ...latency("httpFindOne"),
        note: `${s.httpFindOne.n} calls, user by id`,
      },
      {
        benchmark: "adapter findOne via direct `adapter(ctx)` inside one query",
        result: `${formatNs(s.directFindOne.p50)} median`,
        ...latency("directFindOne"),
        note: `${s.directFindOne.n} calls, same lookup`,
      },
      {
        benchmark: "httpAdapter per-call overhead (median difference)",
        result: formatNs(adapterOverhead),
        goal: "< 0.5 ms",
        ok: adapterOverhead < 500_000,
        note: "the requirements allow > 50 ms",
      },
    ];
    return rows;
  },
};
