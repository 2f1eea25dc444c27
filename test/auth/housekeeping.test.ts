/**
 * The auth housekeeping (src/auth/housekeeping.ts) on the example app: expired sessions and
 * verification rows are deleted a batch per transaction, the cleanup scheduling itself again
 * while it found a full batch, and valid ones stay (their JWTs keep working).
 */
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../../examples/app/app.ts";
import { CLEANUP_CRON } from "../../src/auth/housekeeping.ts";
import { anyApi } from "../../src/backend/functions/references.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { eventually } from "../helpers/wait.ts";

let example: ExampleApp | undefined;
afterEach(async () => {
  await example?.close();
  example = undefined;
});

type Row = { _id: string; expiresAt: number; identifier?: string };
const rows = (e: ExampleApp, table: "session" | "verification") =>
  e.backend.read(async (db) => (await db.query(table as never).collect()) as unknown as Row[]);

describe("auth housekeeping", () => {
  it("is one of the example app's cron jobs", () => {
    expect(app.crons?.jobs.map((j) => [j.name, j.path])).toContainEqual([CLEANUP_CRON, "auth:deleteExpired"]);
  });

  it("deletes expired sessions and verifications in batches and keeps valid ones", async () => {
    example = await startExampleApp();
    const e = example;
    const users = [];
    for (const name of ["ann", "bob", "cat", "dan", "eve"]) users.push(await e.signUp(`${name}@example.com`));
    const sessions = await rows(e, "session");
    expect(sessions.length).toBe(5);
    const now = Date.now();
    // Four of five sessions expired; five expired verification rows and one valid.
    await e.backend.write(async (db) => {
      for (const s of sessions.slice(1)) await db.patch(s._id as never, { expiresAt: now - 60_000 } as never);
      for (let i = 0; i < 6; i++) {
        await db.insert(
          "verification" as never,
          {
            identifier: `test-${i}`,
            value: "x",
            expiresAt: i < 5 ? now - 60_000 : now + 3_600_000,
            createdAt: now,
            updatedAt: now,
          } as never,
        );
      }
    });
    const first = await e.backend.runMutation(
      anyApi.auth.deleteExpired,
      { batch: 2 },
      { allowInternal: true },
    );
    expect(first.value).toEqual({ sessions: 2, verifications: 2, more: true });
    // The rest goes in further transactions, scheduled by the cleanup itself.
    await eventually(async () => {
      expect((await rows(e, "session")).map((s) => s._id)).toEqual([sessions[0]._id]);
      expect((await rows(e, "verification")).map((v) => v.identifier)).toEqual(["test-5"]);
    });
    const me = await e.call("query", "users:me", {}, users[0].token);
    expect(me.status).toBe(200);
  }, 120_000);
});
