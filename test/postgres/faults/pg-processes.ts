/**
 * The processes of a test PostgreSQL server, for injecting faults: the postmaster (from
 * `postmaster.pid` in its data directory) and every child (backends, checkpointer, WAL writer…).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestPostgres } from "../../helpers/postgres.ts";

/** The postmaster's pid, read from the data directory the server reports. */
export async function postmasterPid(pg: TestPostgres): Promise<number> {
  const [{ setting }] = await pg.sql<{ setting: string }>(
    "SELECT setting FROM pg_settings WHERE name = 'data_directory'",
  );
  return Number(readFileSync(join(setting, "postmaster.pid"), "utf8").split("\n")[0]);
}

/** Pids of the direct children of `parent` (from /proc). */
function childrenOf(parent: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may hold spaces and parentheses: fields start after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent) out.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Sends `signal` to the postmaster and all its children (SIGSTOP freezes the whole server). */
export function signalServer(postmaster: number, signal: NodeJS.Signals): void {
  for (const pid of [postmaster, ...childrenOf(postmaster)]) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
}
