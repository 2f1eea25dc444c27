/**
 * The mail outbox's retries on a real service and a real SMTP server: a message the server keeps
 * refusing is tried the configured number of times, each attempt a failed job with its reason, the
 * last one saying it was given up, and nothing pending after it; a rolled-back transaction queues
 * nothing; the back-off doubles up to its bound.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mailOutbox, mailOutboxFunctions, retryDelayMs } from "../../../src/auth/mail/index.ts";
import { anyApi, defineSchema, functionsFor, v } from "../../../src/backend/server.ts";
import { startTestService, type TestService } from "../../helpers/service.ts";
import { startSmtpServer, type TestSmtpServer } from "../../helpers/smtp.ts";
import { eventually } from "../../helpers/wait.ts";

const schema = defineSchema({});
const { internalMutation } = functionsFor(schema);
const modules = {
  mail: mailOutboxFunctions({ self: anyApi.mail, retry: { attempts: 3, firstRetryMs: 20, maxRetryMs: 40 } }),
  app: {
    /** Queues an email through the outbox the auth callbacks use, then optionally fails. */
    queueThenMaybeFail: internalMutation({
      args: { to: v.string(), fail: v.boolean() },
      handler: async (ctx, { to, fail }) => {
        await mailOutbox(ctx, anyApi.mail).send({ to, subject: "Hello", text: "A queued email\n" });
        if (fail) throw new Error("rolled back after queueing");
      },
    }),
  },
};

interface Job {
  name: string;
  state: string;
  error?: string;
  args: { message?: { to?: string }; attempt?: number };
}

let service: TestService;
let refusing: TestSmtpServer;
beforeAll(async () => {
  refusing = await startSmtpServer({ refuse: true });
  service = await startTestService({ schema, modules });
  await service.backend.env.set("SMTP_URL", refusing.url);
  await service.backend.env.set("MAIL_FROM", "Test <no-reply@example.com>");
});
afterAll(async () => {
  await service?.close();
  await refusing?.close();
});

const deliveriesTo = async (to: string): Promise<Job[]> =>
  (
    (await service.backend.read(async (db) =>
      db.query("_scheduled_jobs" as never).collect(),
    )) as unknown as Job[]
  )
    .filter((job) => job.name === "mail:deliver" && job.args.message?.to === to)
    .sort((a, b) => (a.args.attempt ?? 0) - (b.args.attempt ?? 0));

describe("the mail outbox", () => {
  it("a message the server keeps refusing: each attempt fails visibly, the last gives it up, nothing stays pending", async () => {
    const to = "refused@example.com";
    await service.backend.runMutation("app:queueThenMaybeFail", { to, fail: false }, { allowInternal: true });
    const jobs = await eventually(async () => {
      const all = await deliveriesTo(to);
      expect(all.map((j) => j.state)).toEqual(["failed", "failed", "failed"]);
      return all;
    }, 30_000);
    expect(jobs.map((j) => j.args.attempt)).toEqual([1, 2, 3]);
    expect(jobs[0].error).toMatch(/^Not sent \(attempt 1 of 3; next in 20 ms\): .*550/);
    expect(jobs[1].error).toMatch(/^Not sent \(attempt 2 of 3; next in 40 ms\): .*550/);
    expect(jobs[2].error).toMatch(/^Not sent after 3 attempts, given up: .*550/);
    // The refusing server saw the message three times and took it never.
    expect(refusing.count(to)).toBe(0);
  }, 60_000);

  it("a transaction that rolls back queues nothing", async () => {
    const to = "rolled-back@example.com";
    await expect(
      service.backend.runMutation("app:queueThenMaybeFail", { to, fail: true }, { allowInternal: true }),
    ).rejects.toThrow(/rolled back after queueing/);
    // The delivery job was written in that transaction, so it is gone with it.
    expect(await deliveriesTo(to)).toEqual([]);
  });

  it("back-off doubles from the first wait up to its bound", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, { firstRetryMs: 1000, maxRetryMs: 5000 }))).toEqual([
      1000, 2000, 4000, 5000,
    ]);
    expect(retryDelayMs(1)).toBe(1000);
    expect(retryDelayMs(30)).toBe(15 * 60_000);
  });
});
