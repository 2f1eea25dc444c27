/**
 * Ctrl-C in development stops a server at once: SIGINT outside `NODE_ENV=production` skips the
 * shutdown delay (`SHUTDOWN_DELAY_MS`), which belongs to deploys. SIGTERM, and SIGINT in
 * production, keep it: the server answers `/healthz` 503 draining for the delay before it stops.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { getJson } from "../helpers/http.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const GATED_SERVER = join(ROOT, "test/operations/fixtures/gated-server.ts");
/** Far longer than the test may take: a stop that waited for it would time the test out. */
const DELAY_MS = 600_000;

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.kill();
  server = undefined;
});

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((done) => child.once("exit", (code, signal) => done({ code, signal })));
}

const start = (nodeEnv: string) =>
  spawnServer(GATED_SERVER, {
    DATABASE_URL: tempDatabaseFile(),
    NODE_ENV: nodeEnv,
    SHUTDOWN_DELAY_MS: String(DELAY_MS),
    LOG_LEVEL: "info",
  });

it(
  "SIGINT in development exits 0 at once, without the shutdown delay",
  async () => {
    server = await start("development");
    // An answer means the script ran past `listening` and its signal handlers are installed.
    expect((await getJson(`${server.url}/healthz`)).status).toBe(200);
    const exited = exitOf(server.child);
    const sent = Date.now();
    server.child.kill("SIGINT");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - sent).toBeLessThan(DELAY_MS);
    expect(server.stderr()).toMatch(/SIGINT: stopping/);
  },
  PROCESS_TEST_TIMEOUT,
);

it.each([
  ["SIGTERM", "development"],
  ["SIGTERM", "production"],
  ["SIGINT", "production"],
] as const)(
  "%s with NODE_ENV=%s keeps the shutdown delay: /healthz answers 503 draining and the process stays",
  async (signal, nodeEnv) => {
    server = await start(nodeEnv);
    // An answer means the script ran past `listening` and its signal handlers are installed.
    expect((await getJson(`${server.url}/healthz`)).status).toBe(200);
    server.child.kill(signal);
    await eventually(async () =>
      expect(await getJson(`${server!.url}/healthz`)).toMatchObject({
        status: 503,
        body: { status: "draining" },
      }),
    );
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr()).toContain(`"delayMs":${DELAY_MS}`);
  },
  PROCESS_TEST_TIMEOUT,
);
