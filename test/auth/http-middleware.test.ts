/**
 * The auth HTTP entry (`src/auth/http.ts`) as a unit, over a stand-in auth and action ctx: which
 * paths reach the auth, the request it gets (the cookie header bridge, the client address header
 * set by the platform and never by the client), the answer the client gets (exposed cookies, the
 * typed 429), a database fault behind Better Auth's answer or error turned into the typed 503, and
 * the cross-origin rule. (End to end on the example app: http-entry, security-http, limits-http.)
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import {
  type AuthHandler,
  authHttpRouter,
  authMiddleware,
  corsRule,
  type HttpEnv,
} from "../../src/auth/http.ts";
import { CLIENT_IP_HEADER } from "../../src/auth/rate-limit/rules.ts";
import { AppError } from "../../src/backend/errors.ts";
import type { ActionCtx } from "../../src/backend/server.ts";

type Answer = (request: Request, ctx: ActionCtx) => Promise<Response>;

/** A router whose auth answers with `answer`; `seen` keeps the requests the auth got. */
function routerWith(answer: Answer, options: { app?: Hono<HttpEnv>; basePath?: string } = {}) {
  const seen: Request[] = [];
  const createAuth = (ctx: ActionCtx): AuthHandler => ({
    handler: (request) => {
      seen.push(request);
      return answer(request, ctx);
    },
  });
  const routes = authHttpRouter({ createAuth, ...options });
  return { routes, seen };
}

/** An action ctx whose calls answer `result` (an `Error` is thrown), from `clientIp` (null: none known). */
function actionCtx(result: unknown = "ok", clientIp: string | null = "203.0.113.7"): ActionCtx {
  const settle = async () => {
    if (result instanceof Error) throw result;
    return result;
  };
  return {
    meta: clientIp === null ? {} : { clientIp },
    env: { get: (name: string) => (name === "SITE_URL" ? "https://site.example/app/" : undefined) },
    auth: { getUserIdentity: settle },
    runQuery: settle,
    runMutation: settle,
    runAction: settle,
    runInTransaction: settle,
  } as unknown as ActionCtx;
}

const ok: Answer = async () => Response.json({ ok: true });
const get = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://host.example${path}`, { headers });
const unavailable = () => new AppError("DATABASE_UNAVAILABLE", "the database cannot be reached");

describe("which requests reach the auth", () => {
  it("serves the base path and everything under it, nothing else", async () => {
    const app = new Hono<HttpEnv>();
    app.get("*", (c) => c.text(`app ${c.req.path}`));
    const { routes, seen } = routerWith(ok, { app });
    for (const path of ["/api/auth", "/api/auth/", "/api/auth/get-session"]) {
      expect((await routes.fetch(get(path), actionCtx())).status, path).toBe(200);
    }
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual([
      "/api/auth",
      "/api/auth/",
      "/api/auth/get-session",
    ]);
    for (const path of ["/api/authx", "/api/auth-other/x", "/api", "/other"]) {
      expect(await (await routes.fetch(get(path), actionCtx())).text()).toBe(`app ${path}`);
    }
    expect(seen).toHaveLength(3);
  });

  it("takes another base path", async () => {
    const { routes, seen } = routerWith(ok, { basePath: "/auth" });
    expect((await routes.fetch(get("/auth/x"), actionCtx())).status).toBe(200);
    expect((await routes.fetch(get("/api/auth/x"), actionCtx())).status).toBe(404);
    expect(seen).toHaveLength(1);
    // The middleware alone, with its default.
    const alone = new Hono<HttpEnv>();
    alone.use(authMiddleware(() => ({ handler: ok as AuthHandler["handler"] })));
    expect((await alone.fetch(get("/api/auth/y"), actionCtx())).status).toBe(200);
    expect((await alone.fetch(get("/auth/y"), actionCtx())).status).toBe(404);
  });

  it("without an application router, other paths are 404", async () => {
    const { routes } = routerWith(ok);
    expect((await routes.fetch(get("/anything"), actionCtx())).status).toBe(404);
  });
});

describe("the request the auth gets", () => {
  it("is the client's request untouched when there is nothing to bridge or set", async () => {
    const { routes, seen } = routerWith(ok);
    const request = get("/api/auth/x", { cookie: "a=1" });
    await routes.fetch(request, actionCtx("ok", null));
    expect(seen[0]).toBe(request);
  });

  it("has Service-Auth-Cookie appended to Cookie, and not itself", async () => {
    const { routes, seen } = routerWith(ok);
    await routes.fetch(get("/api/auth/x", { cookie: "a=1", "service-auth-cookie": "b=2" }), actionCtx());
    await routes.fetch(get("/api/auth/x", { "service-auth-cookie": "c=3" }), actionCtx());
    expect(seen.map((r) => r.headers.get("cookie"))).toEqual(["a=1; b=2", "c=3"]);
    expect(seen.map((r) => r.headers.has("service-auth-cookie"))).toEqual([false, false]);
  });

  it("carries the platform's client address, never one the client sent", async () => {
    const { routes, seen } = routerWith(ok);
    await routes.fetch(get("/api/auth/x", { [CLIENT_IP_HEADER]: "6.6.6.6" }), actionCtx("ok", "203.0.113.7"));
    await routes.fetch(get("/api/auth/x", { [CLIENT_IP_HEADER]: "6.6.6.6" }), actionCtx("ok", null));
    await routes.fetch(get("/api/auth/x"), actionCtx("ok", "198.51.100.1"));
    expect(seen.map((r) => r.headers.get(CLIENT_IP_HEADER))).toEqual(["203.0.113.7", null, "198.51.100.1"]);
    // Setting the address leaves the cookies alone.
    await routes.fetch(get("/api/auth/x", { cookie: "a=1" }), actionCtx());
    expect(seen.map((r) => r.headers.get("cookie"))).toEqual([null, null, null, "a=1"]);
  });

  it("keeps the method, URL, other headers and body", async () => {
    const { routes, seen } = routerWith(ok);
    const request = new Request("http://host.example/api/auth/sign-in", {
      method: "POST",
      headers: { "content-type": "application/json", "service-auth-cookie": "s=1", "x-other": "o" },
      body: '{"email":"a@b"}',
    });
    await routes.fetch(request, actionCtx());
    expect(seen[0].method).toBe("POST");
    expect(seen[0].url).toBe("http://host.example/api/auth/sign-in");
    expect(seen[0].headers.get("x-other")).toBe("o");
    expect(await seen[0].text()).toBe('{"email":"a@b"}');
  });
});

describe("the answer the client gets", () => {
  it("mirrors Set-Cookie into Set-Service-Auth-Cookie, keeping status, status text and body", async () => {
    const { routes } = routerWith(async () => {
      const headers = new Headers({ "x-kept": "k" });
      headers.append("set-cookie", "a=1; Path=/");
      headers.append("set-cookie", "b=2; Path=/");
      return new Response("body", { status: 201, statusText: "Made", headers });
    });
    const res = await routes.fetch(get("/api/auth/x"), actionCtx());
    expect(res.status).toBe(201);
    expect(res.statusText).toBe("Made");
    expect(await res.text()).toBe("body");
    expect(res.headers.get("x-kept")).toBe("k");
    expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    expect(res.headers.get("set-service-auth-cookie")).toBe("a=1; Path=/, b=2; Path=/");
  });

  it("adds no Set-Service-Auth-Cookie when no cookie is set", async () => {
    const { routes } = routerWith(ok);
    const res = await routes.fetch(get("/api/auth/x"), actionCtx());
    expect(res.headers.has("set-service-auth-cookie")).toBe(false);
    expect(await res.json()).toEqual({ ok: true });
  });

  it("turns Better Auth's 429 into TOO_MANY_REQUESTS with Retry-After from X-Retry-After", async () => {
    const { routes } = routerWith(
      async () =>
        new Response('{"message":"Too many requests. Please try again later."}', {
          status: 429,
          statusText: "Too Many",
          headers: { "x-retry-after": "17", "content-type": "text/plain", "x-kept": "k" },
        }),
    );
    const res = await routes.fetch(get("/api/auth/sign-in"), actionCtx());
    expect(res.status).toBe(429);
    expect(res.statusText).toBe("Too Many");
    expect(res.headers.get("retry-after")).toBe("17");
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-kept")).toBe("k");
    expect(await res.json()).toEqual({
      code: "TOO_MANY_REQUESTS",
      message: "Too many requests; try again in 17 seconds",
    });
  });

  it("a 429 without X-Retry-After says 60 seconds", async () => {
    const { routes } = routerWith(async () => new Response("{}", { status: 429 }));
    const res = await routes.fetch(get("/api/auth/x"), actionCtx());
    expect(res.headers.get("retry-after")).toBe("60");
    expect((await res.json()).message).toBe("Too many requests; try again in 60 seconds");
  });

  it("leaves other statuses' bodies alone", async () => {
    const { routes } = routerWith(
      async () => new Response('{"code":"X"}', { status: 400, headers: { "x-retry-after": "5" } }),
    );
    const res = await routes.fetch(get("/api/auth/x"), actionCtx());
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('{"code":"X"}');
    expect(res.headers.has("retry-after")).toBe(false);
  });
});

describe("a database fault behind the auth's answer", () => {
  const calls: [string, (ctx: ActionCtx) => Promise<unknown>][] = [
    ["runQuery", (ctx) => ctx.runQuery("a:b" as any, {})],
    ["runMutation", (ctx) => ctx.runMutation("a:b" as any, {})],
    ["runAction", (ctx) => ctx.runAction("a:b" as any, {})],
    ["runInTransaction", (ctx) => ctx.runInTransaction(async () => null)],
    ["getUserIdentity", (ctx) => ctx.auth.getUserIdentity()],
  ];

  it.each(calls)("a swallowed fault of %s answers the typed 503 and no cookie", async (_, call) => {
    const { routes } = routerWith(async (_request, ctx) => {
      await call(ctx).catch(() => {});
      return new Response("{}", { status: 401, headers: { "set-cookie": "session=; Max-Age=0" } });
    });
    const res = await routes.fetch(get("/api/auth/get-session"), actionCtx(unavailable()));
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await res.json()).toEqual({
      status: "error",
      code: "DATABASE_UNAVAILABLE",
      message: "the database cannot be reached",
    });
  });

  it("the first of several faults is the answer, DATABASE_BUSY included", async () => {
    const ctx = actionCtx();
    let n = 0;
    const faults = [new AppError("DATABASE_BUSY", "locked"), unavailable()];
    (ctx as any).runQuery = async () => {
      throw faults[n++];
    };
    const { routes } = routerWith(async (_request, watched) => {
      await watched.runQuery("a:b" as any, {}).catch(() => {});
      await watched.runQuery("a:b" as any, {}).catch(() => {});
      return ok(_request, watched);
    });
    const res = await routes.fetch(get("/api/auth/x"), ctx);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: "DATABASE_BUSY", message: "locked" });
  });

  it("a thrown fault answers the typed 503 too", async () => {
    const { routes } = routerWith(async (_request, ctx) => {
      await ctx.runMutation("a:b" as any, {});
      return ok(_request, ctx);
    });
    const res = await routes.fetch(get("/api/auth/x"), actionCtx(unavailable()));
    expect(res.status).toBe(503);
    expect((await res.json()).code).toBe("DATABASE_UNAVAILABLE");
  });

  it("the watched calls still answer, and still throw, what the platform's do", async () => {
    const results: unknown[] = [];
    const { routes } = routerWith(async (_request, ctx) => {
      for (const [, call] of calls) results.push(await call(ctx).catch((e: Error) => `threw ${e.message}`));
      return ok(_request, ctx);
    });
    await routes.fetch(get("/api/auth/x"), actionCtx("value"));
    await routes.fetch(get("/api/auth/x"), actionCtx(new AppError("FORBIDDEN", "no")));
    expect(results).toEqual([...calls.map(() => "value"), ...calls.map(() => "threw no")]);
  });

  it("other errors are no fault: a swallowed one leaves the answer, a thrown one is the platform's 500", async () => {
    const forbidden = () => actionCtx(new AppError("FORBIDDEN", "no"));
    const swallowed = routerWith(async (_request, ctx) => {
      await ctx.runQuery("a:b" as any, {}).catch(() => {});
      return Response.json({ answered: true });
    });
    const res = await swallowed.routes.fetch(get("/api/auth/x"), forbidden());
    expect(await res.json()).toEqual({ answered: true });
    const thrown = routerWith(async (_request, ctx) => {
      await ctx.runQuery("a:b" as any, {});
      return ok(_request, ctx);
    });
    const failed = await thrown.routes.fetch(get("/api/auth/x"), forbidden());
    expect(failed.status).toBe(500);
    const plain = routerWith(async () => {
      throw new Error("auth broke");
    });
    expect((await plain.routes.fetch(get("/api/auth/x"), actionCtx())).status).toBe(500);
  });
});

describe("an error of the auth that is no database fault", () => {
  it("reaches the router's error handling unchanged (an HTTPException keeps its answer)", async () => {
    const { routes } = routerWith(async () => {
      throw new HTTPException(418, { message: "teapot" });
    });
    const res = await routes.fetch(get("/api/auth/x"), actionCtx());
    expect(res.status).toBe(418);
    expect(await res.text()).toBe("teapot");
  });
});

describe("corsRule", () => {
  it("allows SITE_URL's origin with credentials, the cookie bridge headers and GET, POST, OPTIONS", () => {
    const env = {
      get: (name: string) => (name === "SITE_URL" ? "https://site.example:8443/app/" : undefined),
    };
    const rule = corsRule(env as any);
    // The origin rule answers SITE_URL's origin with itself and any other with nothing.
    const origin = rule.origin as (origin: string) => string | null;
    expect(origin("https://site.example:8443")).toBe("https://site.example:8443");
    expect(origin("https://site.example")).toBeNull();
    expect(origin("https://evil.example")).toBeNull();
    expect(rule).toEqual({
      origin: expect.any(Function),
      allowHeaders: ["Content-Type", "Authorization", "Service-Auth-Cookie"],
      exposeHeaders: ["Set-Service-Auth-Cookie"],
      allowMethods: ["GET", "POST", "OPTIONS"],
      credentials: true,
    });
    expect(routerWith(ok).routes.cors).toBe(corsRule);
  });
});
