/**
 * The process helper the tests and benchmarks share (helpers/spawn-ready.ts): ready on its line
 * (also when the line arrives in pieces), SIGTERM for a graceful stop, SIGKILL for a process that
 * ignores it, and typed failures with the output for a process that exits early or stays silent.
 */
import { describe, expect, it } from "vitest";
import { PROCESS_WAIT_MS } from "./process.ts";
import { spawnReady } from "./spawn-ready.ts";
import { eventually } from "./wait.ts";

/** `node -e script`, ready within the usual bound for a child process. */
const node = (
  script: string,
  ready: RegExp,
  extra: { readyOn?: "stdout" | "stderr"; timeoutMs?: number } = {},
) =>
  spawnReady({
    name: "fixture",
    args: ["-e", script],
    env: process.env,
    ready,
    timeoutMs: PROCESS_WAIT_MS,
    ...extra,
  });

const TIMEOUT = 3 * PROCESS_WAIT_MS;

describe("spawnReady", () => {
  it(
    "resolves on the ready line with its match, keeps both streams, and stops gracefully with SIGTERM",
    async () => {
      const server = await node(
        `process.on("SIGTERM", () => { console.log("bye"); process.exit(0); });
         console.error("warming up");
         console.log("listening 4321");
         setInterval(() => {}, 1000);`,
        /listening (\d+)/,
        { readyOn: "stdout" },
      );
      expect(server.match[1]).toBe("4321");
      expect(server.stderr()).toContain("warming up");
      await server.stop();
      expect(server.child.exitCode).toBe(0);
      expect(server.stdout()).toContain("bye");
      expect(server.output()).toContain("warming up");
    },
    TIMEOUT,
  );

  it(
    "finds a ready line written in pieces",
    async () => {
      const server = await node(
        `process.stdout.write("BENCH_RE");
         setTimeout(() => process.stdout.write('ADY {"port":7}\\n'), 50);
         setInterval(() => {}, 1000);`,
        /^BENCH_READY (\{.*\})\r?\n/m,
      );
      expect(JSON.parse(server.match[1])).toEqual({ port: 7 });
      await server.stop();
    },
    TIMEOUT,
  );

  it(
    "SIGKILLs a process that ignores SIGTERM once the grace period is over",
    async () => {
      const stubborn = await node(
        `process.on("SIGTERM", () => console.log("ignoring SIGTERM"));
         console.log("ready");
         setInterval(() => {}, 1000);`,
        /ready/,
      );
      const graceMs = 500;
      await stubborn.stop({ graceMs });
      expect(stubborn.child.signalCode).toBe("SIGKILL");
      expect(stubborn.stdout()).toContain("ignoring SIGTERM");
      // Stopping again is a no-op.
      await stubborn.stop();
    },
    TIMEOUT,
  );

  it(
    "rejects with the exit code and the output when the process exits before its ready line",
    async () => {
      const failing = node(`console.error("cannot open the database"); process.exit(3);`, /listening/);
      await expect(failing).rejects.toThrow(
        /fixture exited \(3\) before it was ready[\s\S]*cannot open the database/,
      );
    },
    TIMEOUT,
  );

  it(
    "rejects and SIGKILLs a process that stays silent past the timeout",
    async () => {
      const silent = node(`console.log("started " + process.pid); setInterval(() => {}, 1000);`, /never/, {
        timeoutMs: 5_000,
      });
      const message = await silent.then(
        () => "ready",
        (e: Error) => e.message,
      );
      expect(message).toMatch(/^fixture was not ready within 5000 ms; it wrote:\nstarted \d+/);
      const pid = Number(/started (\d+)/.exec(message)?.[1]);
      // Gone: signalling it fails (ESRCH) once the SIGKILL landed.
      await eventually(() => expect(() => process.kill(pid, 0)).toThrow());
    },
    TIMEOUT,
  );
});
