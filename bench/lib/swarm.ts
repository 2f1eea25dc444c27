/**
 * Parent side of `fixtures/socket-swarm.ts`: spreads sockets over several child processes (each
 * under the open-file limit, each from its own loopback source address 127.0.0.x), waits until all
 * hold their subscription, and collects when each socket saw a marked update.
 */
import { type ChildProcess, fork } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("../fixtures/socket-swarm.ts", import.meta.url));

export interface SwarmOptions {
  url: string;
  sockets: number;
  processes: number;
  path: string;
  args?: Record<string, unknown>;
  /** Tokens for `connect`, used in turn; anonymous sockets without. */
  tokens?: string[];
  timeoutMs?: number;
}

export interface Swarm {
  size: number;
  /**
   * Arms every socket to watch for an update containing `marker`; resolves when all are armed
   * with a function resolving to the arrival times (hrtime ns), one per socket.
   */
  awaitMarker(marker: string): Promise<() => Promise<number[]>>;
  close(): Promise<void>;
}

interface Child {
  process: ChildProcess;
  next(): Promise<Record<string, unknown>>;
}

function start(options: SwarmOptions, index: number, sockets: number): Child {
  const child = fork(entry, [], {
    execArgv: ["--import", "tsx"],
    env: {
      ...process.env,
      SWARM_URL: options.url,
      SWARM_SOCKETS: String(sockets),
      SWARM_LOCAL_ADDRESS: `127.0.0.${2 + index}`,
      SWARM_TOKENS: JSON.stringify(options.tokens ?? []),
      SWARM_PATH: options.path,
      SWARM_ARGS: JSON.stringify(options.args ?? {}),
    },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
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
    start(options, i, Math.min(per, options.sockets - i * per)),
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
      awaitMarker: async (marker) => {
        const armed = children.map((c) => c.next());
        for (const c of children) c.process.send({ await: marker });
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
