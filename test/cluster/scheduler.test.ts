/**
 * The scheduler in cluster mode (`WORKERS=2` on one SQLite file): every worker runs a runner, and
 * still each cron tick runs once and each scheduled job runs once. Real processes: the scheduling
 * app's server (test/scheduler/fixtures) forked into two workers; the test reads the outcome
 * through an instance of its own on the same file (no runner).
 */
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { callFunction } from "../helpers/http.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";
import { modules, schema } from "../scheduler/fixtures/jobs.ts";

const SERVER = join(ROOT, "test/scheduler/fixtures/scheduler-server.ts");
const TICKS = 8;

interface Job {
  name: string;
  state: string;
  runAt: number;
  owner?: string;
  cron?: string;
  args: { label?: string };
}

let server: SpawnedServer | undefined;
let observer: TestService | undefined;
afterEach(async () => {
  await observer?.close();
  await server?.kill();
});

/** Every job and every recorded run, in one snapshot. */
const snapshot = (service: TestService) =>
  service.backend.read(async (db) => ({
    jobs: (await db.query("_scheduled_jobs" as never).collect()) as unknown as Job[],
    labels: (await db.query("runs").collect()).map((r) => r.label),
  }));

it(
  "WORKERS=2: each cron tick runs once across both workers' runners, and each scheduled job once",
  async () => {
    const databaseUrl = tempDatabaseFile();
    server = await spawnServer(SERVER, { DATABASE_URL: databaseUrl, WORKERS: "2", CRON_TICK_MS: "150" });
    observer = await startTestService({ schema, modules, databaseUrl, scheduler: false });
    const watcher = observer;

    // Batches of slow jobs until both workers' runners have run some (each claims at most 20 at once).
    let scheduled = 0;
    await eventually(async () => {
      const batch = await callFunction(server!.url, "mutation", "jobs:scheduleMany", {
        from: scheduled,
        count: 50,
        slow: true,
      });
      expect(batch.status, JSON.stringify(batch.body)).toBe(200);
      scheduled += 50;
      const { jobs } = await snapshot(watcher);
      const owners = new Set(jobs.filter((j) => j.state === "done").map((j) => j.owner));
      expect(owners.size).toBe(2);
    }, 90_000);

    // Everything scheduled ran, and at least TICKS cron ticks.
    const { jobs, labels } = await eventually(async () => {
      const seen = await snapshot(watcher);
      expect(seen.labels.filter((l) => l.startsWith("many-")).length).toBeGreaterThanOrEqual(scheduled);
      expect(seen.jobs.filter((j) => j.cron === "tick" && j.state === "done").length).toBeGreaterThanOrEqual(
        TICKS,
      );
      return seen;
    }, 90_000);

    // Each job once: every label recorded once, every job done (none failed, none left running).
    const many = labels.filter((l) => l.startsWith("many-"));
    expect(many.length).toBe(scheduled);
    expect(new Set(many).size).toBe(scheduled);
    const manyJobs = jobs.filter((j) => j.name === "jobs:slowRecord");
    expect(manyJobs.length).toBe(scheduled);
    expect(new Set(manyJobs.map((j) => j.state))).toEqual(new Set(["done"]));

    // Each tick once: one job per tick time, and (the run and its done mark commit together) as
    // many recorded runs as done tick jobs in the same snapshot: a tick run twice would show as a
    // second job for its time or a second run.
    const ticks = jobs.filter((j) => j.cron === "tick");
    const times = ticks.map((j) => j.runAt);
    expect(new Set(times).size).toBe(times.length);
    expect(labels.filter((l) => l === "tick").length).toBe(ticks.filter((j) => j.state === "done").length);
    // Both workers took ticks or jobs: two runners were claiming all along.
    expect(new Set(jobs.filter((j) => j.state === "done").map((j) => j.owner)).size).toBe(2);
  },
  PROCESS_TEST_TIMEOUT,
);
