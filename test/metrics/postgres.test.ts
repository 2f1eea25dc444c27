/**
 * Metrics of the PostgreSQL engine, on a real server: pooled connections in use while a
 * transaction holds one, the commit channel (NOTIFY) of each instance, and the commit lag once
 * both instances have applied each other's commits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modules, routes } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { postJson } from "../helpers/http.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";
import { hasSample, sampleValue, scrape } from "./fixtures/scrape.ts";

const TOKEN = "metrics-token-0123456789abcdef";

describe.skipIf(!postgresBinDir)("metrics on PostgreSQL", () => {
  const server = usePostgres();
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    const databaseUrl = await server().createDatabase();
    a = await startTestService({ schema, modules, routes, databaseUrl, metrics: { token: TOKEN } });
    b = await startTestService({ schema, modules, routes, databaseUrl, metrics: { token: TOKEN } });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  // Both instances run in this process: one registry, so the scrape shows both engines.
  const metrics = async () => (await scrape(`${a.url}/metrics`, TOKEN)).text;

  it("shows a pooled connection in use while a transaction holds it", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const begun = new Promise<void>((resolve) => (started = resolve));
    const writing = a.backend.engine.write(async () => {
      started();
      await held;
    });
    await begun;
    try {
      expect(sampleValue(await metrics(), "service_auth_db_pool_connections_in_use")).toBeGreaterThanOrEqual(
        1,
      );
      expect(hasSample(await metrics(), "service_auth_db_pool_waiting")).toBe(true);
    } finally {
      release();
      await writing;
    }
    await eventually(async () =>
      expect(sampleValue(await metrics(), "service_auth_db_pool_connections_in_use")).toBe(0),
    );
  });

  it("shows each instance listening for NOTIFY and no lag once the commits are applied", async () => {
    const sent = await postJson(`${a.url}/api/mutation`, {
      path: "messages:send",
      args: { body: "x", author: "m" },
    });
    expect(sent.status).toBe(200);
    await eventually(async () => {
      const text = await metrics();
      expect(sampleValue(text, "service_auth_commit_channel", { mode: "listening" })).toBe(2);
      expect(hasSample(text, "service_auth_commit_lag")).toBe(true);
      expect(sampleValue(text, "service_auth_commit_lag")).toBe(0);
    });
    expect(await b.backend.engine.commitLag?.()).toBe(0);
  });
});
