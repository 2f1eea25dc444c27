/**
 * A real HAProxy (Debian's `haproxy` package) in front of test servers on 127.0.0.1: HTTP mode,
 * round robin, health checks on `/healthz`, WebSockets tunnelled. The configuration is the one
 * docs/operations.md's "Deploys that drop nothing" shows. Its admin socket tells the test which servers the
 * balancer sees up, so tests wait on that instead of on time.
 *
 * Missing binary: the tests are skipped with a loud message, except under `CI=true`, where it is a
 * failure (`.ci/run` installs the package).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort } from "./browser.ts";
import { tempDir } from "./temp.ts";
import { eventually } from "./wait.ts";

const BINARY = "/usr/sbin/haproxy";

/** Whether HAProxy is installed; false means the balancer tests are skipped. */
export const haproxyInstalled = existsSync(BINARY);

if (!haproxyInstalled) {
  const message =
    "HAProxy is not installed, so the rolling-restart tests cannot run. Install it with `apt-get install -y haproxy`.";
  if (process.env.CI === "true") throw new Error(`${message} (CI=true: failing instead of skipping)`);
  console.warn(`\n${"!".repeat(100)}\n!! SKIPPING HAProxy tests: ${message}\n${"!".repeat(100)}\n`);
}

export interface TestHaproxy {
  url: string;
  /** Each server's state as the balancer sees it (`UP`, `DOWN`, `UP 1/2`, …), by name `s0`, `s1`, … */
  states(): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

/** The balancer's configuration for `ports` (servers named `s0`, `s1`, … in that order). */
export function haproxyConfig(options: { frontendPort: number; serverPorts: number[]; adminSocket: string }) {
  return `global
  stats socket ${options.adminSocket} mode 600 level admin
  maxconn 4096

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  # WebSockets: the tunnel after the upgrade lives as long as the client keeps it.
  timeout tunnel 1h
  timeout check 2s
  # A connection refused by a stopping server is retried on another one (a request that reached a
  # server is never sent twice).
  option redispatch
  retries 3

frontend public
  bind 127.0.0.1:${options.frontendPort}
  default_backend service

backend service
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  # Down after 2 failed checks 250 ms apart: well inside the servers' SHUTDOWN_DELAY_MS.
  default-server inter 250ms fall 2 rise 2
${options.serverPorts.map((port, i) => `  server s${i} 127.0.0.1:${port} check`).join("\n")}
`;
}

/** Starts HAProxy in the foreground in front of `serverPorts`; call `stop()` when done. */
export async function startHaproxy(serverPorts: number[]): Promise<TestHaproxy> {
  const dir = tempDir("haproxy-");
  const adminSocket = join(dir, "admin.sock");
  const frontendPort = await freePort();
  const configFile = join(dir, "haproxy.cfg");
  writeFileSync(configFile, haproxyConfig({ frontendPort, serverPorts, adminSocket }));
  const child: ChildProcess = spawn(BINARY, ["-db", "-f", configFile], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));

  const admin = (command: string) =>
    new Promise<string>((done, fail) => {
      const socket = connect(adminSocket);
      let answer = "";
      socket.on("data", (d) => (answer += d));
      socket.on("end", () => done(answer));
      socket.on("error", fail);
      socket.end(`${command}\n`);
    });

  const states = async () => {
    const csv = await admin("show stat");
    const [header, ...rows] = csv.trim().split("\n");
    const columns = header.replace(/^# /, "").split(",");
    const svname = columns.indexOf("svname");
    const status = columns.indexOf("status");
    const result: Record<string, string> = {};
    for (const row of rows) {
      const cells = row.split(",");
      if (/^s\d+$/.test(cells[svname])) result[cells[svname]] = cells[status];
    }
    return result;
  };

  // Ready once its admin socket answers (it binds the frontend before that).
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`haproxy exited at start:\n${output}`);
    await states();
  });
  return {
    url: `http://127.0.0.1:${frontendPort}`,
    states,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
