/**
 * Scheduled functions and cron jobs on real services: a job scheduled by a committed mutation
 * runs once, one scheduled by a rolled-back mutation never; jobs can be canceled before they run;
 * a failing job is recorded as failed (its writes rolled back); actions run at most once, also
 * when their process is SIGKILLed; 1,000 jobs survive a SIGKILL and each runs exactly once; a
 * cron tick runs once across several instances (SQLite and PostgreSQL).
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { metricsRegistry } from "../../src/backend/metrics/metrics.ts";
import { callFunction } from "../helpers/http.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";
import { modules, schema, tickingCrons } from "./fixtures/jobs.ts";

const SERVER = join(ROOT, "test/scheduler/fixtures/scheduler-server.ts");

interface Job {
  _id: string;
  name: string;
  state: string;
  runAt: number;
  error?: string;
  cron?: string;
}

const services: TestService[] = [];
const servers: SpawnedServer[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => s.kill()));
});

async function start(options: { databaseUrl?: string; crons?: ReturnType<typeof tickingCrons> } = {}) {
  const service = await startTestService({ schema, modules, ...options });
  services.push(service);
  return service;
}

const call = async (
  service: { url: string },
  kind: "query" | "mutation" | "action",
  path: string,
  args = {},
) => {
  const answer = await callFunction(service.url, kind, path, args);
  return answer.body as { status: string; value?: any; code?: string; message?: string };
};
const labels = async (service: { url: string }): Promise<string[]> =>
  (await call(service, "query", "jobs:labels")).value;
const jobsOf = (service: TestService): Promise<Job[]> =>
  service.backend.read(
    async (db) => (await db.query("_scheduled_jobs" as never).collect()) as unknown as Job[],
  );

/** One sample's value from a scrape of this process's registry (0 when absent). */
async function sample(name: string, labels = ""): Promise<number> {
  const text = await metricsRegistry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ""} `));
  return line ? Number(line.split(" ")[1]) : 0;
}

describe("scheduled functions", () => {
  it("runs a job scheduled by a committed mutation once; a rolled-back mutation schedules nothing", async () => {
    const service = await start();
    const refused = await call(service, "mutation", "jobs:scheduleThenFail", { label: "rolled back" });
    expect(refused).toMatchObject({ status: "error", code: "BAD_REQUEST" });
    const scheduled = await call(service, "mutation", "jobs:schedule", { label: "committed", delayMs: 0 });
    expect(scheduled.status).toBe("success");
    // The committed job is the barrier: scheduled after the rolled-back one, it runs no earlier.
    await eventually(async () => expect(await labels(service)).toEqual(["committed"]));
    const jobs = await jobsOf(service);
    expect(jobs.map((j) => [j.name, j.state])).toEqual([["jobs:record", "done"]]);
    expect(jobs[0]._id).toBe(scheduled.value);
  });

  it("runs a job at its time, cancels one not yet run, and refuses to cancel a finished one", async () => {
    const service = await start();
    const later = await call(service, "mutation", "jobs:schedule", { label: "later", delayMs: 600_000 });
    const soon = await call(service, "mutation", "jobs:scheduleAt", { label: "soon", at: Date.now() });
    expect(await call(service, "mutation", "jobs:cancel", { id: later.value })).toMatchObject({
      value: true,
    });
    await eventually(async () => expect(await labels(service)).toEqual(["soon"]));
    expect(await call(service, "mutation", "jobs:cancel", { id: soon.value })).toMatchObject({
      value: false,
    });
    expect(await call(service, "mutation", "jobs:cancel", { id: later.value })).toMatchObject({
      value: false,
    });
    const states = Object.fromEntries((await jobsOf(service)).map((j) => [j._id, j.state]));
    expect(states).toEqual({ [later.value]: "canceled", [soon.value]: "done" });
  });

  it("records a failing job as failed with its error, its writes rolled back; runs actions and jobs scheduled from actions", async () => {
    const service = await start();
    const failing = await call(service, "mutation", "jobs:scheduleFailing");
    await call(service, "mutation", "jobs:scheduleAction", { label: "a" });
    await call(service, "action", "jobs:scheduleFromAction", { label: "from action" });
    await eventually(async () => expect((await labels(service)).sort()).toEqual(["action:a", "from action"]));
    await eventually(async () => {
      const job = (await jobsOf(service)).find((j) => j._id === failing.value);
      expect(job).toMatchObject({ state: "failed", error: "this job fails" });
    });
    expect(await labels(service)).not.toContain("must not stay");
  });

  it("reports runs by kind and outcome, the queue's length and its lag in the metrics", async () => {
    const service = await start();
    const done = 'kind="mutation",outcome="done"';
    const failed = 'kind="mutation",outcome="failed"';
    const [doneBefore, failedBefore] = [
      await sample("service_auth_scheduler_job_runs_total", done),
      await sample("service_auth_scheduler_job_runs_total", failed),
    ];
    await call(service, "mutation", "jobs:schedule", { label: "counted", delayMs: 0 });
    await call(service, "mutation", "jobs:scheduleFailing");
    await call(service, "mutation", "jobs:schedule", { label: "waiting", delayMs: 600_000 });
    await eventually(async () => expect(await labels(service)).toEqual(["counted"]));
    await eventually(async () => {
      expect(await sample("service_auth_scheduler_job_runs_total", done)).toBe(doneBefore + 1);
      expect(await sample("service_auth_scheduler_job_runs_total", failed)).toBe(failedBefore + 1);
    });
    expect(await sample("service_auth_scheduler_jobs_pending")).toBe(1);
    // The one pending job is not due: nothing is late.
    expect(await sample("service_auth_scheduler_lag_seconds")).toBe(0);
  });

  it("checks the function and its arguments when scheduling, not when due", async () => {
    const service = await start();
    expect(await call(service, "mutation", "jobs:scheduleUnknown")).toMatchObject({
      status: "error",
      code: "FUNCTION_NOT_FOUND",
    });
    expect(await call(service, "mutation", "jobs:scheduleBadArgs")).toMatchObject({
      status: "error",
      code: "INVALID_ARGUMENTS",
    });
    expect(await jobsOf(service)).toEqual([]);
  });

  it("runs each of 1,000 jobs exactly once across a SIGKILL of the server", async () => {
    const databaseUrl = tempDatabaseFile();
    const env = { DATABASE_URL: databaseUrl, SCHEDULER_LEASE_MS: "1000" };
    let server = await spawnServer(SERVER, env);
    servers.push(server);
    for (let from = 0; from < 1000; from += 100)
      expect(
        (await call(server, "mutation", "jobs:scheduleMany", { from, count: 100, slow: true })).status,
      ).toBe("success");
    // Killed mid-way: some jobs done, some claimed, most pending.
    await eventually(async () => expect((await labels(server)).length).toBeGreaterThan(50));
    await server.kill("SIGKILL");
    const before = (await labelsFromFile(databaseUrl)).length;
    expect(before).toBeLessThan(1000);
    server = await spawnServer(SERVER, env);
    servers.push(server);
    await eventually(async () => expect((await labels(server)).length).toBeGreaterThanOrEqual(1000), 120_000);
    const all = await labels(server);
    expect(all.length).toBe(1000);
    expect(new Set(all).size).toBe(1000);
  }, 240_000);

  it("marks an action whose process died as failed, never running it again", async () => {
    const databaseUrl = tempDatabaseFile();
    const env = { DATABASE_URL: databaseUrl, SCHEDULER_LEASE_MS: "1000" };
    let server = await spawnServer(SERVER, env);
    servers.push(server);
    await call(server, "mutation", "jobs:scheduleStuckAction");
    await eventually(async () => expect(await labels(server)).toEqual(["stuck action started"]));
    await server.kill("SIGKILL");
    server = await spawnServer(SERVER, env);
    servers.push(server);
    const service = await start({ databaseUrl });
    await eventually(async () =>
      expect(await jobsOf(service)).toEqual([
        expect.objectContaining({
          state: "failed",
          error: expect.stringMatching(/stopped before it finished/),
        }),
      ]),
    );
    expect(await labels(server)).toEqual(["stuck action started"]);
  }, 120_000);
});

/** What ran, read from the database file directly (the server is dead). */
async function labelsFromFile(databaseUrl: string): Promise<string[]> {
  const service = await startTestService({ schema, modules, databaseUrl, scheduler: false });
  try {
    return (await call(service, "query", "jobs:labels")).value;
  } finally {
    await service.close();
  }
}

/** Every cron job run so far and every run it recorded, in one snapshot. */
async function cronRuns(service: TestService) {
  return service.backend.read(async (db) => {
    const jobs = (await db.query("_scheduled_jobs" as never).collect()) as unknown as Job[];
    const ticks = (await db.query("runs").collect()).filter((r) => r.label === "tick");
    return { done: jobs.filter((j) => j.cron === "tick" && j.state === "done"), ticks: ticks.length };
  });
}

async function expectOneRunPerTick(instances: TestService[]) {
  await eventually(
    async () => expect((await cronRuns(instances[0])).done.length).toBeGreaterThanOrEqual(6),
    60_000,
  );
  const { done, ticks } = await cronRuns(instances[0]);
  const times = done.map((j) => j.runAt);
  expect(new Set(times).size).toBe(times.length);
  expect(ticks).toBe(done.length);
}

describe("cron jobs", () => {
  it("runs each tick once with two instances on one SQLite file", async () => {
    const databaseUrl = tempDatabaseFile();
    const first = await start({ databaseUrl, crons: tickingCrons(150) });
    const second = await start({ databaseUrl, crons: tickingCrons(150) });
    await expectOneRunPerTick([first, second]);
  }, 90_000);

  describe.skipIf(!postgresBinDir)("on PostgreSQL", () => {
    const postgres = usePostgres();

    it("runs each tick once with three instances, and 300 jobs from all of them each once", async () => {
      const databaseUrl = await postgres().createDatabase();
      const instances = [await start({ databaseUrl, crons: tickingCrons(150) })];
      instances.push(
        ...(await Promise.all([1, 2].map(() => start({ databaseUrl, crons: tickingCrons(150) })))),
      );
      await Promise.all(
        instances.map((s, i) => call(s, "mutation", "jobs:scheduleMany", { from: i * 100, count: 100 })),
      );
      await expectOneRunPerTick(instances);
      await eventually(
        async () =>
          expect(
            (await labels(instances[0])).filter((l) => l.startsWith("many-")).length,
          ).toBeGreaterThanOrEqual(300),
        60_000,
      );
      const many = (await labels(instances[0])).filter((l) => l.startsWith("many-"));
      expect(many.length).toBe(300);
      expect(new Set(many).size).toBe(300);
    }, 120_000);
  });
});
