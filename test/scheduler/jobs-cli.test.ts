/** `service-auth jobs list|cancel` against a real database, in a real CLI process. */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callFunction } from "../helpers/http.ts";
import { ROOT, runCli } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { modules, schema } from "./fixtures/jobs.ts";

const SERVICE_APP = join(ROOT, "test/scheduler/fixtures/app.ts");
let service: TestService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe("jobs CLI", () => {
  it("lists jobs as JSON lines, filters by state, cancels a pending job once", async () => {
    // No runner here: the jobs stay where the test puts them.
    service = await startTestService({ schema, modules, scheduler: false });
    const env = { SERVICE_APP, DATABASE_URL: service.databaseFile };
    const later = await callFunction(service.url, "mutation", "jobs:schedule", {
      label: "later",
      delayMs: 600_000,
    });
    const soon = await callFunction(service.url, "mutation", "jobs:schedule", { label: "soon", delayMs: 0 });

    const listed = await runCli(["jobs", "list"], { env });
    expect(listed.code).toBe(0);
    const jobs = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(jobs.map((j) => [j.id, j.function, j.kind, j.state])).toEqual([
      [soon.body.value, "jobs:record", "mutation", "pending"],
      [later.body.value, "jobs:record", "mutation", "pending"],
    ]);
    expect(Date.parse(jobs[1].runAt) - Date.parse(jobs[0].runAt)).toBeGreaterThan(500_000);

    const canceled = await runCli(["jobs", "cancel", later.body.value], { env });
    expect([canceled.code, canceled.stderr.trim()]).toEqual([0, `canceled ${later.body.value}`]);
    const again = await runCli(["jobs", "cancel", later.body.value], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not a pending job/);

    const onlyCanceled = await runCli(["jobs", "list", "--state", "canceled"], { env });
    expect(
      onlyCanceled.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).id),
    ).toEqual([later.body.value]);
    const bad = await runCli(["jobs", "list", "--state", "sleeping"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--state must be one of pending, running, done, failed, canceled/);
  }, 120_000);
});
