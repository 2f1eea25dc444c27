/**
 * `ctx.scheduledJobs.list`: an app query reads the scheduler's queue (states, times, errors, the
 * cron), never the jobs' arguments; bad filters are typed 400s. (Live updates: the console's
 * Chromium test, test/admin/admin-jobs.browser.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callFunction } from "../helpers/http.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";
import { modules, schema } from "./fixtures/jobs.ts";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ schema, modules });
});
afterAll(async () => {
  await service?.close();
});

const call = async (kind: "query" | "mutation", path: string, args = {}) =>
  (await callFunction(service.url, kind, path, args)) as {
    status: number;
    body: { status: string; value?: any; code?: string; message?: string };
  };

describe("ctx.scheduledJobs.list", () => {
  it("lists jobs newest first with their states and errors, never their arguments", async () => {
    const later = (await call("mutation", "jobs:schedule", { label: "secret label", delayMs: 3_600_000 }))
      .body.value;
    const failing = (await call("mutation", "jobs:scheduleFailing")).body.value;
    await eventually(async () => {
      const failed = (await call("query", "jobs:listJobs", { state: "failed" })).body.value;
      expect(failed.map((j: { _id: string }) => j._id)).toContain(failing);
    });
    const all = (await call("query", "jobs:listJobs")).body.value as any[];
    expect(all[0]._id).toBe(failing);
    expect(all[0]).toMatchObject({ name: "jobs:failing", kind: "mutation", state: "failed", cron: null });
    expect(all[0].error).toMatch(/this job fails/);
    expect(all[0].finishedAt).toBeGreaterThan(0);
    const pending = all.find((j) => j._id === later);
    expect(pending).toMatchObject({ name: "jobs:record", state: "pending", startedAt: null, error: null });
    for (const job of all) expect(Object.keys(job)).not.toContain("args");
    expect(JSON.stringify(all)).not.toContain("secret label");
    expect((await call("query", "jobs:listJobs", { limit: 1 })).body.value).toHaveLength(1);

    await call("mutation", "jobs:cancel", { id: later });
    const canceled = (await call("query", "jobs:listJobs", { state: "canceled" })).body.value;
    expect(canceled.map((j: { _id: string }) => j._id)).toEqual([later]);
  });

  it("refuses an unknown state or a limit out of range with 400 BAD_REQUEST", async () => {
    for (const args of [{ state: "sleeping" }, { limit: 0 }, { limit: 501 }, { limit: 1.5 }]) {
      const answer = await call("query", "jobs:listJobs", args);
      expect(answer.status, JSON.stringify(args)).toBe(400);
      expect(answer.body.code).toBe("BAD_REQUEST");
    }
  });
});
