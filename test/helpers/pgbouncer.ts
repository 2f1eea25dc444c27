/**
 * PgBouncer in transaction mode in front of a test PostgreSQL server: a generated ini on a free
 * port, trust authentication, started in the foreground and stopped with the test. Under root it
 * runs as the `postgres` user (PgBouncer refuses to run as root).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort } from "./browser.ts";
import { tempDir } from "./temp.ts";
import { eventually } from "./wait.ts";

export const PGBOUNCER = "/usr/sbin/pgbouncer";
export const pgbouncerInstalled = existsSync(PGBOUNCER);
if (!pgbouncerInstalled) {
  const message = `PgBouncer is not installed (${PGBOUNCER}; apt-get install -y pgbouncer): the pooler tests cannot run`;
  if (process.env.CI === "true") throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n!! SKIPPING: ${message}\n`);
}

export interface TestPgBouncer {
  port: number;
  stop(): Promise<void>;
}

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** Resolves once something accepts TCP connections on `port`; throws at once if PgBouncer exits. */
async function listening(port: number, child: ChildProcess, log: () => string): Promise<void> {
  await eventually(async () => {
    if (child.exitCode !== null) return;
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (!open) throw new Error(`pgbouncer does not accept connections on port ${port}: ${log()}`);
  });
  if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${log()}`);
}

/** Starts PgBouncer (`pool_mode = transaction`) forwarding every database to `postgresPort`. */
export async function startPgBouncer(postgresPort: number): Promise<TestPgBouncer> {
  const dir = tempDir("service-auth-pgbouncer-");
  const port = await freePort();
  const user = postgresUser();
  const users = join(dir, "userlist.txt");
  writeFileSync(users, `"postgres" ""\n`);
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=127.0.0.1 port=${postgresPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${users}`,
      "pool_mode = transaction",
      "default_pool_size = 4",
      "max_client_conn = 200",
      // Startup parameters node-postgres may send (when configured) that PgBouncer does not track.
      "ignore_startup_parameters = extra_float_digits,statement_timeout,idle_in_transaction_session_timeout",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      "",
    ].join("\n"),
  );
  if (user) for (const f of [dir, users, ini]) chownSync(f, user.uid, user.gid);
  const child = spawn(PGBOUNCER, [ini], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const stopSync = () => child.exitCode === null && child.kill("SIGKILL");
  process.once("exit", stopSync);
  await listening(port, child, () => output);
  return {
    port,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
