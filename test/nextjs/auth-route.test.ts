/**
 * The `/api/auth/*` route handler of service-auth/nextjs (a proxy to the backend) against the real
 * example app, called as Next calls it (a `Request` in, a `Response` out): sign-up and the token
 * endpoint through it with every cookie forwarded, nothing outside the auth prefix, and a typed
 * 502 when the backend cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authRouteHandlers } from "../../src/nextjs/auth-route.ts";
import { CookieJar, type ExampleApp, freePort, PASSWORD, startExampleApp } from "../helpers/example-app.ts";

/** The Next app's origin as the handler sees requests (any host: the path is what is forwarded). */
const NEXT = "http://next.test";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(() => app?.close());

/** `fetch` that records the URL of every call. */
function countingFetch() {
  const calls: string[] = [];
  const f = ((input: string | URL | Request, init?: RequestInit) => {
    calls.push(String(input));
    return fetch(input, init);
  }) as typeof fetch;
  return { calls, fetch: f };
}

describe("auth route handler", () => {
  it("signs up through the backend, forwarding the body, Origin and every Set-Cookie", async () => {
    const counter = countingFetch();
    const { GET, POST } = authRouteHandlers({ url: app.url, fetch: counter.fetch });
    const email = `route${Date.now()}@example.com`;
    const response = await POST(
      new Request(`${NEXT}/api/auth/sign-up/email?from=test`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: app.url },
        body: JSON.stringify({ email, password: PASSWORD, name: "Route" }),
      }),
    );
    expect(response.status).toBe(200);
    expect(counter.calls).toEqual([`${app.url}/api/auth/sign-up/email?from=test`]);
    expect((await response.json()).user.email).toBe(email);
    const jar = new CookieJar();
    jar.absorb(response);
    // Separate cookies, not one joined header.
    expect(jar.get("service-auth.session_token")).toBeTruthy();
    expect(jar.get("service-auth.jwt")).toBeTruthy();

    const token = await GET(
      new Request(`${NEXT}/api/auth/backend/token`, { headers: { cookie: jar.header() } }),
    );
    expect(token.status).toBe(200);
    expect(typeof (await token.json()).token).toBe("string");
    const anonymous = await GET(new Request(`${NEXT}/api/auth/backend/token`));
    expect(anonymous.status).toBe(401);
  });

  it("answers 404 outside the auth prefix without calling the backend", async () => {
    const counter = countingFetch();
    const { POST } = authRouteHandlers({ url: app.url, fetch: counter.fetch });
    for (const path of ["/api/query", "/api/authx/token", "/api/auth/../mutation"]) {
      const response = await POST(new Request(`${NEXT}${path}`, { method: "POST", body: "{}" }));
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: "NOT_FOUND" });
    }
    expect(counter.calls).toEqual([]);
  });

  it("answers a typed 502 when the backend cannot be reached", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { GET } = authRouteHandlers({ url: closed });
    const response = await GET(new Request(`${NEXT}/api/auth/get-session`));
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual({
      status: "error",
      code: "BACKEND_UNREACHABLE",
      message: "The auth server cannot be reached",
    });
  });
});
