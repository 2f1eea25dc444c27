/**
 * The HTTP entry of requirements §4.1 on the example app: the cross-origin rule on `/api/*` (preflight and
 * actual responses, another origin refused), the `Service-Auth-Cookie` / `Set-Service-Auth-Cookie`
 * bridge for clients without cookies, and the MessageChannel polyfill.
 */
import { join } from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runTsx } from "../helpers/process.ts";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(async () => {
  await app.close();
});

const preflight = (path: string, origin: string) =>
  fetch(`${app.url}${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type,authorization,service-auth-cookie",
    },
  });

const list = (value: string | null) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe("cross-origin rule on /api/*", () => {
  for (const path of ["/api/query", "/api/auth/sign-in/email"]) {
    it(`preflight of ${path} from SITE_URL allows the required headers with credentials`, async () => {
      const res = await preflight(path, app.url);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(app.url);
      expect(res.headers.get("access-control-allow-credentials")).toBe("true");
      const allowed = list(res.headers.get("access-control-allow-headers"));
      for (const h of ["content-type", "authorization", "service-auth-cookie"]) expect(allowed).toContain(h);
      expect(list(res.headers.get("access-control-allow-methods"))).toContain("post");
    });

    it(`preflight of ${path} from another origin is not allowed`, async () => {
      const res = await preflight(path, "https://evil.example");
      expect(res.headers.get("access-control-allow-origin")).not.toBe("https://evil.example");
      expect(res.headers.get("access-control-allow-origin")).not.toBe("*");
    });
  }

  it("POST /api/query answers with the origin, credentials and the exposed Set-Service-Auth-Cookie", async () => {
    const res = await fetch(`${app.url}/api/query`, {
      method: "POST",
      headers: { origin: app.url, "content-type": "application/json" },
      body: JSON.stringify({ path: "users:count", args: {} }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(app.url);
    expect(res.headers.get("access-control-allow-credentials")).toBe("true");
    expect(list(res.headers.get("access-control-expose-headers"))).toContain("set-service-auth-cookie");
  });

  it("POST /api/query from another origin gets no allow-origin for it", async () => {
    const res = await fetch(`${app.url}/api/query`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ path: "users:count", args: {} }),
    });
    expect(res.headers.get("access-control-allow-origin")).not.toBe("https://evil.example");
    expect(res.headers.get("access-control-allow-origin")).not.toBe("*");
  });

  it("auth responses carry the cross-origin headers too", async () => {
    const res = await fetch(`${app.url}/api/auth/get-session`, { headers: { origin: app.url } });
    expect(res.headers.get("access-control-allow-origin")).toBe(app.url);
    expect(list(res.headers.get("access-control-expose-headers"))).toContain("set-service-auth-cookie");
  });
});

/** Cookie pairs from a `Set-Service-Auth-Cookie` value (Set-Cookie lines joined with ", "). */
function cookiePairs(header: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of header.split(/,\s*(?=[^;,=\s]+=)/)) {
    const [pair, ...attributes] = line.split(";").map((s) => s.trim());
    const i = pair.indexOf("=");
    const expired = attributes.some((a) => /^max-age=0$/i.test(a));
    if (expired) out.delete(pair.slice(0, i));
    else out.set(pair.slice(0, i), pair.slice(i + 1));
  }
  return out;
}

describe("cross-domain cookie bridge", () => {
  it("a client without cookies signs in, refreshes and signs out through the two headers", async () => {
    const email = "bridge@example.com";
    await app.signUp(email);
    const bridge = async (path: string, method: string, cookies: Map<string, string>, body?: unknown) => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: {
          origin: app.url,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(cookies.size
            ? { "service-auth-cookie": [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
            : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const exposed = res.headers.get("set-service-auth-cookie");
      return { res, exposed, json: await res.json().catch(() => undefined) };
    };

    const signIn = await bridge("/api/auth/sign-in/email", "POST", new Map(), { email, password: PASSWORD });
    expect(signIn.res.status).toBe(200);
    expect(signIn.exposed).not.toBeNull();
    const cookies = cookiePairs(signIn.exposed!);
    expect(cookies.has("service-auth.session_token")).toBe(true);
    const jwt = cookies.get("service-auth.jwt")!;
    expect(decodeJwt(jwt).sub).toBe(signIn.json.user.id);

    const token = await bridge("/api/auth/backend/token", "GET", cookies);
    expect(token.res.status).toBe(200);
    expect(decodeJwt(token.json.token).sessionId).toBe(decodeJwt(jwt).sessionId);
    expect(cookiePairs(token.exposed!).get("service-auth.jwt")).toBe(token.json.token);
    expect((await app.call("query", "users:me", {}, token.json.token)).body.value.email).toBe(email);

    const session = await bridge("/api/auth/get-session", "GET", cookies);
    expect(session.json.user.email).toBe(email);

    const out = await bridge("/api/auth/sign-out", "POST", cookies, {});
    expect(out.res.status).toBe(200);
    expect(out.exposed).toMatch(/service-auth\.jwt=;[^,]*Max-Age=0/i);
    expect((await bridge("/api/auth/backend/token", "GET", cookies)).res.status).toBe(401);
  });

  it("without the header the same request has no session", async () => {
    const res = await fetch(`${app.url}/api/auth/backend/token`, { headers: { origin: app.url } });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-service-auth-cookie")).toBeNull();
  });
});

describe("MessageChannel polyfill", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  const probe = join(ROOT, "test/auth/fixtures/polyfill-probe.ts");

  it("defines a stand-in with no-op ports when the global is absent", async () => {
    const res = await runTsx(probe, ["remove"]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.absentBefore).toBe(true);
    expect(out.defined).toBe(true);
    expect(out.distinctPorts).toBe(true);
    for (const port of [out.port1, out.port2]) {
      expect(port.methods.sort()).toEqual([
        "addEventListener",
        "close",
        "dispatchEvent",
        "postMessage",
        "removeEventListener",
        "start",
      ]);
      expect(port.dispatchEvent).toBe(false);
      expect(port.onmessage).toBeNull();
      expect(port.onmessageerror).toBeNull();
      expect(port.callsThrow).toBe(false);
    }
  });

  it("leaves an existing MessageChannel untouched", async () => {
    const res = await runTsx(probe, ["keep"]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.absentBefore).toBe(false);
    expect(out.untouched).toBe(true);
    // Node's own channel: dispatchEvent of a real port returns true.
    expect(out.port1.dispatchEvent).toBe(true);
  });
});
