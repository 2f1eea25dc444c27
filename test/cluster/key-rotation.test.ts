/**
 * Graceful key rotation in SQLite cluster mode (issue 28 item 5): two workers of the example app on
 * one file, following each other through the commit log. The wake-ups are lost and nobody polls
 * within the test, so worker B hears of A's rotation only when it catches up itself: the token
 * of the new key, sent to B at once, makes B catch up from the log before refusing it, and is
 * accepted. (PostgreSQL: test/postgres/key-rotation.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { internal } from "../../examples/app/app.ts";
import { keyStates } from "../../src/auth/keys/stored-jwks.ts";
import type { CommitWakeups } from "../../src/backend/storage/sqlite/commit-log.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

const kidOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString()).kid;

/** Wake-ups that never arrive (a lost message every time). */
const lost: CommitWakeups = { publish: () => {}, subscribe: () => () => {} };
/** A worker's engine that learns of the other's commits only when it catches up itself. */
const worker = (filename: string) =>
  new SqliteEngine({
    filename,
    pollIntervalMs: 600_000,
    commitLog: { wakeups: lost, pollIntervalMs: 600_000 },
  });

let a: ExampleApp;
let b: ExampleApp;

beforeAll(async () => {
  const file = tempDatabaseFile();
  a = await startExampleApp({ databaseUrl: file, engine: worker(file) });
  // One issuer for both: a stored SITE_URL wins over each worker's default (its own address).
  await a.backend.env.set("SITE_URL", a.url);
  b = await startExampleApp({ databaseUrl: file, engine: worker(file) });
  expect(b.backend.env.get("SITE_URL")).toBe(a.url);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

it("a token of the new key reaches a worker that has not loaded the new JWKS: accepted, not 401", async () => {
  const user = await a.signUp("cluster-rotation@example.com");
  const oldKid = kidOf(user.token);
  expect((await b.call("query", "users:me", {}, user.token)).status).toBe(200);

  const jwks = (await a.backend.runAction(
    internal.auth.rotateKeys,
    { overlap: true },
    { allowInternal: true },
  )) as string;
  await a.backend.env.set("JWKS", jwks);
  const fresh = (await user.browser.token()).body.token!;
  expect(kidOf(fresh)).toBe(keyStates(jwks).find((s) => s.state === "signing")!.id);
  expect(kidOf(fresh)).not.toBe(oldKid);
  expect(b.backend.env.get("JWKS")).not.toBe(jwks);

  const res = await b.call("query", "users:me", {}, fresh);
  expect(res.status, res.text).toBe(200);
  expect(res.body.value).toMatchObject({ _id: user.userId });
  expect(b.backend.env.get("JWKS")).toBe(jwks);
  expect((await b.call("query", "users:me", {}, user.token)).status).toBe(200);
});
