/**
 * The cross-origin rule (`cors-policy.ts`) replaced `hono/cors`: for the same options it must give
 * the same headers, preflights included, so rules written for `hono/cors` behave as before. Both
 * run here as Hono middleware in front of the same route and their answers are compared.
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import { describe, expect, it } from "vitest";
import { createHttpApp } from "../../src/backend/http/app.ts";
import type { CorsPolicy } from "../../src/backend/http/cors-policy.ts";
import { modules } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { startTestBackend } from "../helpers/service.ts";

const POLICIES: Record<string, CorsPolicy> = {
  default: {},
  star: { origin: "*", exposeHeaders: ["X-A", "X-B"], maxAge: 600 },
  site: {
    origin: "http://site.test",
    allowHeaders: ["Content-Type", "Authorization", "Service-Auth-Cookie"],
    exposeHeaders: ["Set-Service-Auth-Cookie"],
    allowMethods: ["GET", "POST", "OPTIONS"],
    credentials: true,
  },
  list: { origin: ["http://a.test", "http://site.test"], allowMethods: [], credentials: false },
  fn: { origin: (o) => (o.endsWith(".site.test") ? o : null), maxAge: 0 },
};

const REQUESTS: Array<{ method: string; headers: Record<string, string> }> = [
  { method: "GET", headers: {} },
  { method: "POST", headers: { origin: "http://site.test" } },
  { method: "POST", headers: { origin: "http://evil.test" } },
  { method: "GET", headers: { origin: "http://x.site.test" } },
  { method: "OPTIONS", headers: { origin: "http://site.test", "access-control-request-method": "POST" } },
  {
    method: "OPTIONS",
    headers: {
      origin: "http://a.test",
      "access-control-request-method": "PUT",
      "access-control-request-headers": "X-One, x-two ,x-three",
    },
  },
  { method: "OPTIONS", headers: { origin: "http://x.site.test" } },
  { method: "OPTIONS", headers: {} },
];

/** A Hono app answering `/api/thing` behind `middleware`. */
function appWith(middleware: Parameters<Hono["use"]>[1]): Hono {
  return new Hono().use("/api/*", middleware).all("/api/thing", (c) => c.json({ ok: true }));
}

const headersOf = (res: Response) => Object.fromEntries([...res.headers]);

describe("cors policy", () => {
  it("gives the headers hono/cors gives, for requests and preflights", async () => {
    const backend = await startTestBackend({ schema, modules });
    try {
      for (const [name, policy] of Object.entries(POLICIES)) {
        // The platform's app applies the rule on /api/*; unknown paths reach the app routes.
        const ours = createHttpApp(backend, {
          routes: { fetch: (request) => appWith((_c, next) => next()).fetch(request), cors: () => policy },
        });
        const theirs = appWith(cors(policy as Parameters<typeof cors>[0]));
        for (const { method, headers } of REQUESTS) {
          const url = "http://host.test/api/thing";
          const a = await ours.request(url, { method, headers });
          const b = await theirs.request(url, { method, headers });
          const what = `${name} ${method} ${JSON.stringify(headers)}`;
          expect(a.status, what).toBe(b.status);
          // Plus the platform's own headers of every /api/* answer.
          const { "cache-control": cache, "x-content-type-options": sniff, ...cross } = headersOf(a);
          expect([cache, sniff], what).toEqual(["no-store", "nosniff"]);
          expect(cross, what).toEqual(headersOf(b));
        }
      }
    } finally {
      await backend.close();
    }
  });
});
