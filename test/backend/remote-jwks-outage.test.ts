/**
 * A remote key set past its max age is refreshed, but while the endpoint is failing the stale keys
 * must be served without a fetch per request (each would wait up to the fetch timeout and hammer
 * the failing endpoint); retries are spaced by `minRefetchIntervalMs`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RemoteJwksSource } from "../../src/backend/auth/jwks-source.ts";
import { makeKeys } from "../sync/fixtures/auth.ts";

let server: Server;
let url = "";
let hits = 0;
let status = 200;
let body = "";

beforeAll(async () => {
  body = JSON.stringify({ keys: [(await makeKeys("k1")).jwk] });
  server = createServer((_req, res) => {
    hits++;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("RemoteJwksSource during an outage", () => {
  it("serves stale keys without refetching on every call, retrying once per interval", async () => {
    let now = 0;
    const source = new RemoteJwksSource(url, {
      now: () => now,
      maxAgeMs: 1_000,
      minRefetchIntervalMs: 30_000,
    });
    const first = await source.get();
    expect(hits).toBe(1);

    status = 503;
    now = 2_000; // stale: one refresh attempt, which fails; the old keys stay in use
    expect(await source.get()).toBe(first);
    expect(hits).toBe(2);
    for (let i = 0; i < 5; i++) {
      now += 100;
      expect(await source.get()).toBe(first);
    }
    expect(hits).toBe(2);

    now = 2_000 + 30_001; // the interval passed: try again, and recover
    status = 200;
    await source.get();
    expect(hits).toBe(3);
    now += 100;
    await source.get();
    expect(hits).toBe(3);
  });
});
