/**
 * `startService` applies the documented settings by itself (issue 46): what its options leave
 * unsaid comes from the environment, read and checked by the reader `service-auth start` uses, and
 * a start that cannot work is refused with the same one report. An option given wins over its
 * setting; `settings: false` reads none.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { app } from "../fixtures/app.ts";
import { freePort } from "../helpers/browser.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runTsx, spawnServer } from "../helpers/process.ts";
import { startTestService } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const SERVER = join(ROOT, "test/backend/fixtures/embedding-server.ts");
const TOKEN = "metrics-token-0123456789";

const scrape = (url: string, token?: string) =>
  fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe("startService with the settings of the environment", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("serves on PORT and DATABASE_URL, /metrics with METRICS_TOKEN, and drains per SHUTDOWN_DELAY_MS", async () => {
    const port = await freePort();
    const server = await spawnServer(SERVER, {
      PORT: String(port),
      DATABASE_URL: tempDatabaseFile(),
      METRICS_TOKEN: TOKEN,
      // Long enough to be seen on a loaded machine; the exit comes after it.
      SHUTDOWN_DELAY_MS: "10000",
    });
    try {
      expect(server.port).toBe(port);
      const without = await scrape(server.url);
      expect(without.status).toBe(401);
      await without.body?.cancel();
      const res = await scrape(server.url, TOKEN);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^# HELP /m);
      const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
      server.child.kill("SIGTERM");
      await eventually(async () => expect((await fetch(`${server.url}/healthz`)).status).toBe(503));
      expect((await fetch(`${server.url}/hello`)).status).toBe(200);
      expect(await exited).toBe(0);
    } finally {
      await server.kill();
    }
  });

  it("refuses a misspelled DATABASE_URL with the other bad settings in one report, password masked", async () => {
    const res = await runTsx(SERVER, [], {
      env: {
        PORT: String(await freePort()),
        DATABASE_URL: "postgress://postgres:hunter2@127.0.0.1:5433/svc",
        METRICS_TOKEN: "short",
      },
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/refusing to start: 2 settings to fix/);
    expect(res.stderr).toMatch(
      /DATABASE_URL="postgress:\/\/postgres:\*+@127\.0\.0\.1:5433\/svc": unknown scheme/,
    );
    expect(res.stderr).toMatch(/METRICS_TOKEN="\*+ \(5 characters\)": shorter than 16 characters/);
    expect(res.stderr).not.toMatch(/hunter2/);
    expect(res.stdout).not.toMatch(/listening/);
  });

  it("refuses WORKERS=2 when the program gives no `workers`, naming how to ask for cluster mode", async () => {
    const res = await runTsx(SERVER, [], {
      env: { PORT: String(await freePort()), DATABASE_URL: tempDatabaseFile(), WORKERS: "2" },
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(
      /WORKERS="2": cluster mode, but this program calls startService without `workers`/,
    );
    expect(res.stderr).toMatch(/workers: workersSetting\(\)/);
    expect(res.stdout).not.toMatch(/listening/);
  });
});

describe("startService options against the settings", () => {
  it("an option given wins: its setting is neither used nor checked; the others still apply", async () => {
    // startTestService gives port 0, 127.0.0.1 and a database file of its own.
    const service = await startTestService({
      ...app,
      settings: { PORT: "http", DATABASE_URL: "mysql://db/app", METRICS_TOKEN: TOKEN },
    });
    try {
      expect(service.port).toBeGreaterThan(0);
      expect((await scrape(service.url, TOKEN)).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it("refuses a bad setting of `settings` that no option replaces", async () => {
    await expect(startTestService({ ...app, settings: { SHUTDOWN_TIMEOUT_MS: "soon" } })).rejects.toThrow(
      /refusing to start: 1 setting to fix\n\s+SHUTDOWN_TIMEOUT_MS="soon"/,
    );
  });

  it("`settings: false` reads none: a METRICS_TOKEN in the environment does not open /metrics", async () => {
    const saved = process.env.METRICS_TOKEN;
    process.env.METRICS_TOKEN = TOKEN;
    try {
      const service = await startTestService({ ...app, settings: false });
      try {
        expect((await scrape(service.url, TOKEN)).status).toBe(404);
      } finally {
        await service.close();
      }
      // The same start reading the environment serves it: the difference is the option.
      const reading = await startTestService(app);
      try {
        expect((await scrape(reading.url, TOKEN)).status).toBe(200);
      } finally {
        await reading.close();
      }
    } finally {
      if (saved === undefined) delete process.env.METRICS_TOKEN;
      else process.env.METRICS_TOKEN = saved;
    }
  });
});
