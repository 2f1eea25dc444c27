/**
 * Live sync costs (issue 4, "Performance") on the example app with real auth: RS256 JWTs from the
 * token endpoint code, step 1 (signature, exp, iss, aud) and step 2 (session + user lookup) at
 * every connect. The server runs in a child process (`fixtures/sync-server.ts`); the raw protocol
 * clients (`ws`) run here, so each side has a core.
 *
 * 1. Connect + authenticate: `new WebSocket` → `connected {authenticated:true}`, one at a time.
 * 2. Write → subscriber: client A sends `messages:send`, client B (subscribed to `messages:list`)
 *    receives the update holding it.
 * 3. Revocation push: a `bench:deleteSession` mutation is sent → the victim socket gets `auth_error`
 *    (an upper bound of commit → push: it includes the mutation's trip and run).
 * 4. Concurrent sockets: {@link SOCKETS} authenticated sockets, each subscribed to its own
 *    `bench:me({tab})` (no shared executions), opened in batches; the server's RSS; revocation
 *    push again with all of them held.
 * 5. Precision: reactor executions caused by writes that no subscription read (goal 0).
 */
import { execFileSync } from "node:child_process";
import WebSocket from "ws";
import { type MintedSession, startSyncApp } from "./lib/sync-app.ts";
import { formatCount, formatNs, summarize } from "./lib/timing.ts";
import type { BenchContext, BenchGroup, BenchRow } from "./lib/types.ts";

const SOCKETS = Number(process.env.BENCH_SYNC_SOCKETS ?? 10_000);
/** Distinct sessions behind the sockets (several tabs per session, each with its own query). */
const LOAD_SESSIONS = 1_700;
const REVOKE_SESSIONS = 200;
const CONNECT_SAMPLES = 500;
const WRITE_SAMPLES = 300;
const BATCH = 250;
const UNRELATED_WRITES = 100;

/** A raw protocol socket: send JSON, await the next message matching a predicate. */
class Socket {
  private waiters: { match: (m: any) => boolean; resolve: (m: any) => void; reject: (e: Error) => void }[] =
    [];
  /** Messages nobody waited for (only the last few are kept). */
  readonly unclaimed: any[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const m = JSON.parse(String(data));
      const i = this.waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.waiters.splice(i, 1)[0].resolve(m);
      else if (this.unclaimed.push(m) > 8) this.unclaimed.shift();
    });
    ws.on("close", () => {
      for (const w of this.waiters.splice(0)) w.reject(new Error("socket closed"));
    });
  }

  static open(url: string): Promise<Socket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const s = new Socket(ws);
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(s));
      ws.once("error", reject);
    });
  }

  send(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  next(match: (m: any) => boolean, timeoutMs = 30_000): Promise<any> {
    const i = this.unclaimed.findIndex(match);
    if (i >= 0) return Promise.resolve(this.unclaimed.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve, reject };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no matching message within ${timeoutMs} ms`));
      }, timeoutMs);
      waiter.resolve = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.waiters.push(waiter);
    });
  }

  /** Sends `connect` with `token` and checks the server accepted it. */
  async authenticate(token: string): Promise<void> {
    this.send({ type: "connect", v: 1, token });
    const m = await this.next((x) => x.type === "connected");
    if (!m.authenticated)
      throw new Error(`token refused: ${JSON.stringify(await this.next((x) => x.type === "auth_error"))}`);
  }

  close(): void {
    this.ws.close();
  }
}

/** The soft open-file limit of processes started from here (the server child inherits it). */
function openFileLimit(): number {
  try {
    return Number(execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).trim()) || 1024;
  } catch {
    return 1024;
  }
}

export const sync: BenchGroup = {
  title: "Live sync: authenticated WebSockets on the example app (server in a child process)",
  async run(ctx: BenchContext): Promise<BenchRow[]> {
    const app = await startSyncApp(ctx, { name: "sync" });
    const { wsUrl, call } = app;
    const stats = () =>
      call("action", "bench:stats", {}) as Promise<{
        executions: number;
        watches: number;
        connections: number;
        rssBytes: number;
      }>;

    const limit = openFileLimit();
    const sockets = Math.min(SOCKETS, limit - 500);
    const total = LOAD_SESSIONS + REVOKE_SESSIONS + 3;
    ctx.log(`creating ${total} users with sessions and their JWTs (token endpoint code)`);
    const sessions = await app.sessions(total, "u");
    const [writerA, readerB, bystander] = sessions.splice(0, 3);
    const revokable = sessions.splice(0, REVOKE_SESSIONS);
    const load = sessions;
    if ((await call("query", "users:me", {}, writerA.token))._id !== writerA.userId)
      throw new Error("minted token refused");

    const rows: BenchRow[] = [];

    // 1. Connect + authenticate, one socket at a time.
    ctx.log(`connect + authenticate × ${CONNECT_SAMPLES}`);
    const connectTotal: number[] = [];
    const connectAuth: number[] = [];
    for (let i = -50; i < CONNECT_SAMPLES; i++) {
      const t0 = process.hrtime.bigint();
      const s = await Socket.open(wsUrl);
      const t1 = process.hrtime.bigint();
      await s.authenticate(load[(i + 50) % load.length].token);
      const t2 = process.hrtime.bigint();
      s.close();
      if (i < 0) continue; // warm-up
      connectTotal.push(Number(t2 - t0));
      connectAuth.push(Number(t2 - t1));
    }
    const ct = summarize(connectTotal);
    const ca = summarize(connectAuth);
    rows.push({
      benchmark: "WebSocket connect + authenticate (RS256 + session lookup)",
      result: `${formatNs(ct.p50)} median`,
      p50: formatNs(ct.p50),
      p99: formatNs(ct.p99),
      goal: "p50 < 2 ms",
      ok: ct.p50 < 2_000_000,
      note: `new socket → connected; ${ct.n} sockets, distinct sessions`,
    });
    rows.push({
      benchmark: "… of which `connect` message → `connected`",
      result: `${formatNs(ca.p50)} median`,
      p50: formatNs(ca.p50),
      p99: formatNs(ca.p99),
      note: "steps 1+2 and one round trip",
    });

    // 2. Write → subscriber.
    ctx.log(`write → subscriber × ${WRITE_SAMPLES}`);
    const a = await Socket.open(wsUrl);
    await a.authenticate(writerA.token);
    const b = await Socket.open(wsUrl);
    await b.authenticate(readerB.token);
    b.send({ type: "subscribe", id: "list", path: "messages:list", args: {} });
    await b.next((m) => m.type === "update" && m.id === "list");
    const writeSamples: number[] = [];
    for (let i = -30; i < WRITE_SAMPLES; i++) {
      const body = `m${i}`;
      const t0 = process.hrtime.bigint();
      const seen = b.next(
        (m) => m.type === "update" && m.id === "list" && m.value?.[m.value.length - 1]?.body === body,
      );
      a.send({ type: "mutation", id: i, path: "messages:send", args: { body } });
      await seen;
      const t1 = process.hrtime.bigint();
      await a.next((m) => m.type === "result" && m.id === i);
      if (i >= 0) writeSamples.push(Number(t1 - t0));
    }
    b.close();
    const ws = summarize(writeSamples);
    rows.push({
      benchmark: "Write → subscriber (mutation by A → update at B)",
      result: `${formatNs(ws.p50)} median`,
      p50: formatNs(ws.p50),
      p99: formatNs(ws.p99),
      goal: "p50 < 5 ms",
      ok: ws.p50 < 5_000_000,
      note: `messages:send → messages:list (newest 50); ${ws.n} writes`,
    });

    // 3. Revocation push on an otherwise idle server.
    const revoke = async (victims: Socket[], sessionId: string, id: string): Promise<number> => {
      const pushed = Promise.all(victims.map((v) => v.next((m) => m.type === "auth_error")));
      const t0 = process.hrtime.bigint();
      a.send({ type: "mutation", id, path: "bench:deleteSession", args: { sessionId } });
      await pushed;
      const t1 = process.hrtime.bigint();
      await a.next((m) => m.type === "result" && m.id === id);
      return Number(t1 - t0);
    };
    const idleRevokes = revokable.splice(0, REVOKE_SESSIONS / 2);
    ctx.log(`revocation push × ${idleRevokes.length} (idle server)`);
    const idleRevoke: number[] = [];
    for (const [k, s] of idleRevokes.entries()) {
      const victim = await Socket.open(wsUrl);
      await victim.authenticate(s.token);
      victim.send({ type: "subscribe", id: 1, path: "bench:me", args: { tab: 0 } });
      await victim.next((m) => m.type === "update");
      idleRevoke.push(await revoke([victim], s.sessionId, `r${k}`));
      victim.close();
    }
    const ri = summarize(idleRevoke);
    rows.push({
      benchmark: "Revocation push (session delete → auth_error), idle server",
      result: `${formatNs(ri.p99)} p99`,
      p50: formatNs(ri.p50),
      p99: formatNs(ri.p99),
      goal: "p99 < 50 ms",
      ok: ri.p99 < 50_000_000,
      note: `delete sent → auth_error received (upper bound of commit → push); ${ri.n} revocations`,
    });

    // 4. Many sockets, each with its own live query.
    const before = await stats();
    ctx.log(`opening ${sockets} authenticated sockets with one live query each (batches of ${BATCH})`);
    const held: { socket: Socket; session: MintedSession }[] = [];
    const heartbeat = setInterval(() => {
      for (const h of held) if (h.socket.ws.readyState === 1) h.socket.send({ type: "ping" });
    }, 15_000);
    ctx.defer(() => {
      clearInterval(heartbeat);
      for (const h of held) h.socket.ws.terminate();
    });
    const tOpen = process.hrtime.bigint();
    for (let i = 0; i < sockets; i += BATCH) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(BATCH, sockets - i) }, async (_, k) => {
          const n = i + k;
          const session = load[n % load.length];
          const socket = await Socket.open(wsUrl);
          await socket.authenticate(session.token);
          socket.send({ type: "subscribe", id: 1, path: "bench:me", args: { tab: n } });
          const first = await socket.next((m) => m.type === "update");
          if (first.value?.tab !== n) throw new Error(`socket ${n} got ${JSON.stringify(first)}`);
          return { socket, session };
        }),
      );
      held.push(...batch);
    }
    const openSec = Number(process.hrtime.bigint() - tOpen) / 1e9;
    const after = await stats();
    if (after.connections < sockets)
      throw new Error(`server holds ${after.connections} of ${sockets} sockets`);
    const rssMb = after.rssBytes / 2 ** 20;
    rows.push({
      benchmark: "Concurrent authenticated sockets, one live query each",
      result: `${formatCount(held.length)} sockets, server RSS ${rssMb.toFixed(0)} MB`,
      goal: "10,000 under 1 GB",
      ok: held.length >= 10_000 && rssMb < 1024,
      note: `${formatCount(load.length)} sessions; +${((after.rssBytes - before.rssBytes) / sockets / 1024).toFixed(1)} KB RSS per socket; ${formatCount(after.watches)} watches; opened in ${openSec.toFixed(1)} s (open-file limit ${limit})`,
    });

    // 5. Precision: writes no subscription read.
    ctx.log(`${UNRELATED_WRITES * 2} writes that no subscription read`);
    const e0 = (await stats()).executions;
    for (let i = 0; i < UNRELATED_WRITES; i++) {
      await call("mutation", "messages:send", { body: `unrelated ${i}` }, writerA.token);
      await call("mutation", "bench:renameUser", { userId: bystander.userId, name: `bystander ${i}` });
    }
    const e1 = (await stats()).executions;
    // Control: one write every socket of one session does read re-runs exactly those.
    const touched = load[0];
    const readers = held.filter((h) => h.session === touched);
    const updates = Promise.all(
      readers.map((h) => h.socket.next((m) => m.type === "update" && m.value?.name === "renamed")),
    );
    await call("mutation", "bench:renameUser", { userId: touched.userId, name: "renamed" });
    await updates;
    const e2 = (await stats()).executions;
    rows.push({
      benchmark: "Subscribed queries re-run for unrelated writes",
      result: `${e1 - e0}`,
      goal: "0",
      ok: e1 - e0 === 0,
      note: `${UNRELATED_WRITES} message inserts + ${UNRELATED_WRITES} writes to a user nobody watches, ${formatCount(after.watches)} watches; control: a write to a watched user ran ${e2 - e1} (its ${readers.length} queries + identities)`,
    });

    // Revocation with every socket held: one session's sockets (several tabs) all get the push.
    ctx.log(`revocation push × ${REVOKE_SESSIONS / 4} with ${formatCount(held.length)} sockets held`);
    const loadedRevoke: number[] = [];
    for (let k = 1; k <= REVOKE_SESSIONS / 4; k++) {
      const session = load[k];
      const victims = held.filter((h) => h.session === session).map((h) => h.socket);
      loadedRevoke.push(await revoke(victims, session.sessionId, `l${k}`));
    }
    const rl = summarize(loadedRevoke);
    rows.push({
      benchmark: `Revocation push with ${formatCount(held.length)} sockets held`,
      result: `${formatNs(rl.p99)} p99`,
      p50: formatNs(rl.p50),
      p99: formatNs(rl.p99),
      goal: "p99 < 50 ms",
      ok: rl.p99 < 50_000_000,
      note: `until every socket of the session (${Math.round(held.length / load.length)} tabs) got auth_error; ${rl.n} revocations`,
    });
    a.close();
    return rows;
  },
};
