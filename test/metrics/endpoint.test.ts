/**
 * `/metrics` is never open by default: with neither METRICS_PORT nor METRICS_TOKEN it answers 404;
 * behind a token it answers 401 without it or with a wrong one and 200 with the right one; on a
 * port of its own it is served there (127.0.0.1 by default) and not on the public port.
 */
import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { metricsSetting } from "../../src/backend/metrics/endpoint.ts";
import { SettingsRefusal } from "../../src/backend/settings/problems.ts";
import { type ExampleApp, freePort, startExampleApp } from "../helpers/example-app.ts";
import { spawnExampleServer } from "../helpers/example-server.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { scrape } from "./fixtures/scrape.ts";

const TOKEN = "metrics-token-0123456789abcdef";

describe("the /metrics endpoint", () => {
  let app: ExampleApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("answers 404 when neither a port nor a token is set", async () => {
    app = await startExampleApp();
    const plain = await scrape(`${app.url}/metrics`);
    expect(plain.status).toBe(404);
    expect(JSON.parse(plain.text).code).toBe("NOT_FOUND");
    // A token does not open what is not served.
    expect((await scrape(`${app.url}/metrics`, TOKEN)).status).toBe(404);
    expect(app.service.metricsUrl).toBeUndefined();
  });

  it("asks for the bearer token on the public port: none 401, wrong 401, right 200", async () => {
    app = await startExampleApp({ metrics: { token: TOKEN } });
    const none = await scrape(`${app.url}/metrics`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.text).code).toBe("UNAUTHORIZED");
    expect((await scrape(`${app.url}/metrics`, `${TOKEN}x`)).status).toBe(401);
    expect((await scrape(`${app.url}/metrics`, TOKEN.slice(0, -1))).status).toBe(401);
    expect((await scrape(`${app.url}/metrics`, "short")).status).toBe(401);
    const basic = await fetch(`${app.url}/metrics`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` },
    });
    expect(basic.status).toBe(401);
    const right = await scrape(`${app.url}/metrics`, TOKEN);
    expect(right.status).toBe(200);
    expect(right.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(right.text).toMatch(/^# TYPE service_auth_function_call_duration_seconds histogram$/m);
  });

  it("serves a port of its own on 127.0.0.1, and 404 on the public port", async () => {
    app = await startExampleApp({ metrics: { port: 0 } });
    const url = app.service.metricsUrl;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const own = await scrape(url!);
    expect(own.status).toBe(200);
    expect(own.text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect((await scrape(url!.replace("/metrics", "/healthz"))).status).toBe(404);
    expect((await scrape(`${app.url}/metrics`)).status).toBe(404);
    // Closed with the service.
    await app.close();
    app = undefined;
    await expect(fetch(url!)).rejects.toThrow();
  });

  it("refuses to start when METRICS_PORT is taken, naming the setting", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startExampleApp({ metrics: { port } })).rejects.toThrow(
        new RegExp(`127\\.0\\.0\\.1:${port} is already in use[\\s\\S]*METRICS_PORT setting`),
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it("asks for the token on its own port too when both are set", async () => {
    app = await startExampleApp({ metrics: { port: 0, token: TOKEN } });
    const url = app.service.metricsUrl!;
    expect((await scrape(url)).status).toBe(401);
    expect((await scrape(url, TOKEN)).status).toBe(200);
    expect((await scrape(`${app.url}/metrics`, TOKEN)).status).toBe(200);
  });

  it(
    "npm start serves METRICS_TOKEN on the public port and METRICS_PORT on 127.0.0.1",
    async () => {
      const metricsPort = await freePort();
      const server = await spawnExampleServer({
        DATABASE_URL: tempDatabaseFile(),
        METRICS_TOKEN: TOKEN,
        METRICS_PORT: String(metricsPort),
      });
      try {
        expect((await scrape(`${server.url}/metrics`)).status).toBe(401);
        expect((await scrape(`${server.url}/metrics`, TOKEN)).status).toBe(200);
        expect((await scrape(`http://127.0.0.1:${metricsPort}/metrics`, TOKEN)).status).toBe(200);
        expect((await scrape(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(401);
      } finally {
        await server.stop();
      }
    },
    PROCESS_TEST_TIMEOUT,
  );

  it("reads METRICS_PORT, METRICS_HOST and METRICS_TOKEN, refusing bad values", () => {
    expect(metricsSetting({})).toBeUndefined();
    expect(metricsSetting({ METRICS_PORT: "9464" })).toEqual({
      port: 9464,
      token: undefined,
      hostname: undefined,
    });
    expect(metricsSetting({ METRICS_TOKEN: TOKEN, METRICS_HOST: "0.0.0.0" })).toEqual({
      port: undefined,
      token: TOKEN,
      hostname: "0.0.0.0",
    });
    expect(() => metricsSetting({ METRICS_PORT: "http" })).toThrow(/METRICS_PORT="http": not a port number/);
    expect(() => metricsSetting({ METRICS_PORT: "70000" })).toThrow(/METRICS_PORT/);
    // Both named at once; the token's value is never shown.
    let refusal: unknown;
    try {
      metricsSetting({ METRICS_PORT: "x", METRICS_TOKEN: "short-secret" });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SettingsRefusal);
    const message = String((refusal as Error).message);
    expect(message).toMatch(/2 settings to fix/);
    expect(message).toMatch(/METRICS_TOKEN="\*\*\*\* \(12 characters\)": shorter than 16 characters/);
    expect(message).not.toContain("short-secret");
  });
});
