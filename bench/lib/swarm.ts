/**
 * Parent side of `fixtures/socket-swarm.ts`: spreads sockets over several child processes (each
 * under the open-file limit, each from its own loopback source address 127.0.0.x), waits until all
 * hold their subscription, and collects when each socket saw a marked update.
 */
import { type ChildProcess, fork } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { SwarmSetup } from "../fixtures/socket-swarm.ts";

const entry = fileURLToPath(new URL("../fixtures/socket-swarm.ts", import.meta.url));

export interface SwarmOptions {
  url: string;
  sockets: number;
  processes: number;
  path: string;
  args?: Record<string, unknown>;
  /** Tokens for `connect`: socket `n` (counted over all children) uses `tokens[n % length]`; anonymous without. */
  tokens?: string[];
  /** When set, socket `n` subscribes with `args[indexArg] = n`: its own query, no shared execution. */
  indexArg?: string;
  /** Each socket pings this often, like the client (a third of the server's 60 s idle timeout). */
  heartbeatMs?: number;
  timeoutMs?: number;
}

export interface Swarm {
  size: number;
  /**
   * Arms every open socket (or, with `token`, those that connected with `tokens[token]`) to watch for
   * a message containing `marker`; resolves when all are armed with a function resolving to the
   * arrival times (hrtime ns), one per armed socket.
   */
  awaitMarker(marker: string, token?: number): Promise<() => Promise<number[]>>;
  /** How many sockets are still open (the server may close some, e.g. for idleness). */
  openCount(): Promise<number>;
  /** The children's process ids (to read their CPU time). */
  pids: number[];
  close(): Promise<void>;
}

interface Child {
  process: ChildProcess;
  next(): Promise<Record<string, unknown>>;
}

function start(options: SwarmOptions, index: number, offset: number, sockets: number): Child {
  const child = fork(entry, [], {
    execArgv: ["--conditions=service-auth-source", "--import", "tsx"],
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const setup: SwarmSetup = {
    url: options.url,
    sockets,
    offset,
    localAddress: `127.0.0.${2 + index}`,
    tokens: options.tokens ?? [],
    path: options.path,
    args: options.args ?? {},
    indexArg: options.indexArg,
    heartbeatMs: options.heartbeatMs ?? 20_000,
  };
  child.send({ setup });
  const queue: Record<string, unknown>[] = [];
  const waiters: ((m: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`socket swarm ${index} exited (${code})`))),
  );
  exited.catch(() => {});
  return {
    process: child,
    next: () => {
      const queued = queue.shift();
      if (queued) return Promise.resolve(queued);
      return Promise.race([new Promise<Record<string, unknown>>((r) => waiters.push(r)), exited]);
    },
  };
}

/** Opens `options.sockets` subscribed sockets over `options.processes` children. */
export async function openSwarm(options: SwarmOptions): Promise<Swarm> {
  const per = Math.ceil(options.sockets / options.processes);
  const children = Array.from({ length: options.processes }, (_, i) =>
    start(options, i, i * per, Math.min(per, options.sockets - i * per)),
  );
  const timeout = <T>(p: Promise<T>, what: string) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`socket swarm: ${what} timed out`)),
          options.timeoutMs ?? 120_000,
        ).unref(),
      ),
    ]);
  const close = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.process.exitCode !== null) return resolve();
            c.process.once("exit", () => resolve());
            c.process.send({ close: true }, () => {});
            setTimeout(() => c.process.kill("SIGKILL"), 5_000).unref();
          }),
      ),
    );
  };
  try {
    const ready = await timeout(Promise.all(children.map((c) => c.next())), "opening");
    const size = ready.reduce((n, m) => n + Number(m.ready), 0);
    return {
      size,
      pids: children.map((c) => c.process.pid!),
      openCount: async () => {
        const counts = children.map((c) => c.next());
        for (const c of children) c.process.send({ count: true });
        return (await timeout(Promise.all(counts), "counting")).reduce((n, m) => n + Number(m.open), 0);
      },
      awaitMarker: async (marker, token) => {
        const armed = children.map((c) => c.next());
        for (const c of children) c.process.send({ await: marker, token });
        await timeout(Promise.all(armed), "arming");
        return async () =>
          (await timeout(Promise.all(children.map((c) => c.next())), "waiting for an update")).flatMap(
            (m) => m.seen as number[],
          );
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
