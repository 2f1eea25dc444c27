/**
 * The example app server the socket groups load (`fixtures/sync-server.ts`, real Better Auth):
 * started in a child process on a fresh data directory, stopped when the group ends, with the
 * calls the groups set it up with.
 */
import { fileURLToPath } from "node:url";
import { callFunction, type FunctionKind } from "./api-call.ts";
import { type SpawnedServer, spawnServer } from "./spawn.ts";
import type { BenchContext } from "./types.ts";

const fixture = fileURLToPath(new URL("../fixtures/sync-server.ts", import.meta.url));

/** Sessions created and signed per round trip: one mutation, then one action minting their JWTs. */
const MINT_BATCH = 500;

/** A user with a session and that session's JWT from the token endpoint code. */
export interface MintedSession {
  userId: string;
  sessionId: string;
  sessionToken: string;
  token: string;
}

export interface SyncApp {
  server: SpawnedServer;
  /** The WebSocket endpoint, `ws://127.0.0.1:<port>/api/sync`. */
  wsUrl: string;
  /** One function call over HTTP; resolves with its value, throws unless it succeeded. */
  call(kind: FunctionKind, path: string, args: unknown, token?: string): Promise<any>;
  /** `n` new users with sessions (names `<prefix><batch>_<i>`) and their JWTs. */
  sessions(n: number, prefix: string): Promise<MintedSession[]>;
}

export interface SyncAppOptions {
  /** Names the data directory (`bench-<name>-…`). */
  name: string;
  /** More environment for the server (e.g. `BENCH_WORKERS`). */
  env?: Record<string, string>;
  /** How long the server may take to announce itself. */
  readyTimeoutMs?: number;
}

export async function startSyncApp(ctx: BenchContext, options: SyncAppOptions): Promise<SyncApp> {
  const dataDir = await ctx.tempDir(`bench-${options.name}-`);
  ctx.log("starting the example app server");
  const server = await spawnServer(
    fixture,
    { BENCH_DATA_DIR: dataDir, ...options.env },
    options.readyTimeoutMs,
  );
  ctx.defer(() => server.stop());
  const call = (kind: FunctionKind, path: string, args: unknown, token?: string) =>
    callFunction(server.url, kind, path, args, token);
  return {
    server,
    wsUrl: `ws://127.0.0.1:${server.port}/api/sync`,
    call,
    async sessions(n, prefix) {
      const out: MintedSession[] = [];
      for (let i = 0; i < n; i += MINT_BATCH) {
        const made = (await call("mutation", "bench:createSessions", {
          prefix: `${prefix}${i}_`,
          n: Math.min(MINT_BATCH, n - i),
        })) as Omit<MintedSession, "token">[];
        const tokens = (await call("action", "bench:mintTokens", {
          sessionTokens: made.map((s) => s.sessionToken),
        })) as string[];
        for (const [k, s] of made.entries()) out.push({ ...s, token: tokens[k] });
      }
      return out;
    },
  };
}
