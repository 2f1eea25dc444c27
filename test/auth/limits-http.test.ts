/**
 * Hostile input on the auth routes of the example app: sign-in brute force limited by the real
 * client address (direct, forged `X-Forwarded-For`, `TRUSTED_PROXIES`, IPv6 /64 rotation), sessions
 * recording that address, the body limit and JSON check on `/api/auth/*`, user field lengths, and
 * the no-store / nosniff headers of every API answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AUTH_RATE_LIMITS } from "../../src/auth/rate-limit/rules.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(() => app?.close());
afterEach(async () => {
  await app.backend.env.remove("TRUSTED_PROXIES");
});

const SIGN_IN_MAX = AUTH_RATE_LIMITS["/sign-in/*"].max;

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${app.url}${path}`, {
    method: "POST",
    headers: { origin: app.url, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const signIn = (email: string, password: string, headers: Record<string, string> = {}) =>
  post("/api/auth/sign-in/email", { email, password }, headers);

/** Signs in with a wrong password until the limit; returns the statuses seen. */
async function guess(email: string, attempts: number, headers: () => Record<string, string>) {
  const statuses: number[] = [];
  for (let i = 0; i < attempts; i++) statuses.push((await signIn(email, `wrong-${i}`, headers())).status);
  return statuses;
}

async function expectTooManyRequests(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(await res.json()).toMatchObject({ code: "TOO_MANY_REQUESTS" });
}

// Before the brute force, which leaves the direct client (127.0.0.1) limited on sign-in.
describe("sessions", () => {
  const sessionOf = async (token: string) =>
    app.backend.read(async (db) => (await db.query("session").collect()).find((s: any) => s.token === token));

  it("record the client's address and user agent; a client-sent address header is ignored", async () => {
    // Sign-up signs in; a sign-in here would count against the brute-force tests' direct client.
    const direct = await post(
      "/api/auth/sign-up/email",
      { email: "where@example.com", password: PASSWORD, name: "Where" },
      { "user-agent": "limits-test/1.0", "x-service-auth-client-ip": "9.9.9.9" },
    );
    expect(direct.status).toBe(200);
    const session = await sessionOf((await direct.json()).token);
    expect(session).toMatchObject({ ipAddress: "127.0.0.1", userAgent: "limits-test/1.0" });

    await app.backend.env.set("TRUSTED_PROXIES", "127.0.0.1");
    const proxied = await signIn("where@example.com", PASSWORD, { "x-forwarded-for": "203.0.113.77" });
    expect((await sessionOf((await proxied.json()).token))?.ipAddress).toBe("203.0.113.77");
  });
});

describe("sign-in brute force", () => {
  // The tests of this block run in order: the direct client's count carries over.
  const email = "brute@example.com";
  beforeAll(async () => {
    await app.signUp(email);
  });

  it(`limits a direct client to ${SIGN_IN_MAX} sign-ins a minute, a forged X-Forwarded-For changing nothing`, async () => {
    let n = 0;
    const statuses = await guess(email, SIGN_IN_MAX, () => ({ "x-forwarded-for": `198.51.100.${++n}` }));
    expect(statuses).toEqual(Array(SIGN_IN_MAX).fill(401));
    await expectTooManyRequests(await signIn(email, "wrong-again", { "x-forwarded-for": "198.51.100.200" }));
    // The right password is refused too while limited: guessing cannot go on.
    await expectTooManyRequests(await signIn(email, PASSWORD));
    // Other endpoints are counted apart.
    expect((await app.browser().get("/api/auth/get-session")).status).toBe(200);
  });

  it("believes X-Forwarded-For from a trusted proxy: its right-most untrusted hop is the client", async () => {
    await app.backend.env.set("TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8");
    const statuses = await guess(email, SIGN_IN_MAX, () => ({ "x-forwarded-for": "203.0.113.5" }));
    expect(statuses).toEqual(Array(SIGN_IN_MAX).fill(401));
    await expectTooManyRequests(await signIn(email, "x", { "x-forwarded-for": "203.0.113.5" }));
    // A hop the client forged left of it does not make another client; trusted hops are skipped.
    await expectTooManyRequests(
      await signIn(email, "x", { "x-forwarded-for": "192.0.2.1, 203.0.113.5, 10.1.2.3" }),
    );
    // Another client behind the proxy has its own count, and signs in.
    expect((await signIn(email, PASSWORD, { "x-forwarded-for": "203.0.113.6" })).status).toBe(200);
  });

  it("counts every address of an IPv6 /64 as one client", async () => {
    await app.backend.env.set("TRUSTED_PROXIES", "127.0.0.1");
    let n = 0;
    const rotating = () => ({ "x-forwarded-for": `2001:db8:1:2::${(++n).toString(16)}` });
    expect(await guess(email, SIGN_IN_MAX, rotating)).toEqual(Array(SIGN_IN_MAX).fill(401));
    await expectTooManyRequests(await signIn(email, "x", rotating()));
    expect((await signIn(email, PASSWORD, { "x-forwarded-for": "2001:db8:1:3::1" })).status).toBe(200);
  });
});

describe("bodies", () => {
  it("answers a 50 MB streamed body with 413 after reading only the first megabytes", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    const total = 50 * 1024 * 1024;
    let sent = 0;
    let answered: () => void = () => {};
    const answer = new Promise<void>((resolve) => (answered = resolve));
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Past 4 MiB the upload waits for the answer: a server that read the whole body before
        // answering would never answer.
        if (sent >= 4 * 1024 * 1024) await answer;
        if (sent >= total) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${app.url}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { origin: app.url, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    const sentWhenAnswered = sent;
    answered();
    expect(res.status).toBe(413);
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toMatchObject({ status: "error", code: "PAYLOAD_TOO_LARGE" });
    expect(sentWhenAnswered).toBeLessThanOrEqual(4 * 1024 * 1024 + chunk.length);
  });

  it("answers a 5 MB name with 413 and stores nothing", async () => {
    const res = await post("/api/auth/sign-up/email", {
      email: "huge@example.com",
      password: PASSWORD,
      name: "n".repeat(5 * 1024 * 1024),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe("PAYLOAD_TOO_LARGE");
    const users = await app.backend.read(async (db) => db.query("user").collect());
    expect(users.some((u: any) => u.email === "huge@example.com")).toBe(false);
  });

  it("answers 400 naming the field for a name, email or image over its length limit", async () => {
    const cases = [
      { field: "name", body: { email: "long-name@example.com", name: "n".repeat(257) } },
      { field: "email", body: { email: `${"e".repeat(250)}@example.com`, name: "E" } },
      {
        field: "image",
        body: { email: "long-image@example.com", name: "I", image: `https://x.test/${"i".repeat(2100)}` },
      },
    ];
    for (const { field, body } of cases) {
      const res = await post("/api/auth/sign-up/email", { password: PASSWORD, ...body });
      expect(res.status, field).toBe(400);
      expect(await res.json(), field).toMatchObject({ code: "FIELD_TOO_LONG", field });
    }
    // At the limit is fine.
    const ok = await post("/api/auth/sign-up/email", {
      email: "limit-name@example.com",
      password: PASSWORD,
      name: "n".repeat(256),
    });
    expect(ok.status).toBe(200);
    // update-user is checked as well.
    const { browser } = await app.signUp("rename@example.com");
    const rename = await browser.post("/api/auth/update-user", { name: "r".repeat(300) });
    expect(rename.status).toBe(400);
    expect(rename.body).toMatchObject({ code: "FIELD_TOO_LONG", field: "name" });
  });

  it("answers malformed JSON with 400 BAD_REQUEST on auth and app routes, logging no stack trace", async () => {
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "info";
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const consoleError = vi.spyOn(console, "error").mockImplementation((...args) => {
      written.push(args.map(String).join(" "));
    });
    try {
      for (const path of ["/api/auth/sign-in/email", "/api/auth/sign-up/email", "/api/anything"]) {
        const res = await post(path, '{"email": "a@example.com", "password": ');
        expect(res.status, path).toBe(400);
        expect(await res.json(), path).toEqual({
          status: "error",
          code: "BAD_REQUEST",
          message: "Request body must be JSON",
        });
      }
    } finally {
      stderr.mockRestore();
      consoleError.mockRestore();
      process.env.LOG_LEVEL = level;
    }
    expect(written.join("\n")).not.toMatch(/\n\s+at |stack|SyntaxError/);
  });
});

describe("headers", () => {
  const expectNoStore = (res: { headers: Headers }, what: string) => {
    expect(res.headers.get("cache-control"), what).toBe("no-store");
    expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
  };

  it("marks every answer carrying a token, a session or user data no-store and nosniff", async () => {
    const { browser, token } = await app.signUp("headers@example.com");
    expectNoStore(await browser.get("/api/auth/get-session"), "get-session");
    expectNoStore(await browser.token(), "backend/token");
    expectNoStore(
      await browser.post("/api/auth/sign-in/email", { email: "headers@example.com", password: PASSWORD }),
      "sign-in",
    );
    for (const kind of ["query", "mutation", "action"] as const) {
      expectNoStore(await app.call(kind, "users:me", {}, token), `/api/${kind}`);
    }
    // Errors and refusals too.
    expectNoStore(await app.call("query", "nope:nothing", {}), "404");
    expectNoStore(
      await fetch(`${app.url}/api/query`, { method: "POST", body: "x".repeat(2 * 1024 * 1024) }),
      "413",
    );
  });
});
