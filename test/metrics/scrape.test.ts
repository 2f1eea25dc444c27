/**
 * The example app's `/metrics` on the public port behind METRICS_TOKEN: the scrape passes
 * `promtool check metrics`, and its numbers move as requests are made — a query counts under its
 * function and outcome, a failed sign-in and each kind of refused token under its reason, the
 * identity cache under hit or miss. No label carries a user id, a token or an email.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { AUTH_RATE_LIMITS } from "../../src/auth/rate-limit/rules.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { eventually } from "../helpers/wait.ts";
import { onlyFamilies, promtoolCheck, promtoolInstalled, sampleValue, scrape } from "./fixtures/scrape.ts";

const TOKEN = "metrics-token-0123456789abcdef";
const CALLS = "service_auth_function_call_duration_seconds_count";
const AUTH = "service_auth_auth_outcomes_total";
const SIGN_IN_MAX = AUTH_RATE_LIMITS["/sign-in/*"].max;

describe("metrics scrape", () => {
  let app: ExampleApp;
  let metrics: () => Promise<string>;

  beforeAll(async () => {
    app = await startExampleApp({ metrics: { token: TOKEN } });
    metrics = async () => {
      const { status, text } = await scrape(`${app.url}/metrics`, TOKEN);
      expect(status).toBe(200);
      return text;
    };
  });
  afterAll(() => app?.close());

  it("counts a query under its function and outcome, with its latency", async () => {
    const { token } = await app.signUp("counted@example.com");
    const before = await metrics();
    const labels = { transport: "http", kind: "query", function: "users:me", outcome: "ok" };
    for (let i = 0; i < 3; i++) expect((await app.call("query", "users:me", {}, token)).status).toBe(200);
    expect((await app.call("query", "users:me", {}, null)).status).toBe(401);
    expect((await app.call("query", "no:such", {}, null)).status).toBe(404);
    const after = await metrics();
    expect(sampleValue(after, CALLS, labels) - sampleValue(before, CALLS, labels)).toBe(3);
    const refused = { function: "users:me", outcome: "UNAUTHORIZED" };
    expect(sampleValue(after, CALLS, refused) - sampleValue(before, CALLS, refused)).toBe(1);
    const unknown = { function: "unknown", outcome: "FUNCTION_NOT_FOUND" };
    expect(sampleValue(after, CALLS, unknown) - sampleValue(before, CALLS, unknown)).toBe(1);
    // Latency histogram: every call lands in the +Inf bucket, and took some time.
    const bucket = "service_auth_function_call_duration_seconds_bucket";
    expect(sampleValue(after, bucket, { ...labels, le: "+Inf" })).toBe(sampleValue(after, CALLS, labels));
    expect(sampleValue(after, "service_auth_function_call_duration_seconds_sum", labels)).toBeGreaterThan(0);
  });

  it("counts a failed sign-in as invalid_credentials, a good one as ok", async () => {
    await app.signUp("signin@example.com");
    const before = await metrics();
    const failed = await app.browser().post("/api/auth/sign-in/email", {
      email: "signin@example.com",
      password: "not the password",
    });
    expect(failed.status).toBe(401);
    const good = await app.browser().post("/api/auth/sign-in/email", {
      email: "signin@example.com",
      password: PASSWORD,
    });
    expect(good.status).toBe(200);
    const after = await metrics();
    const delta = (outcome: string) =>
      sampleValue(after, AUTH, { check: "sign_in", outcome }) -
      sampleValue(before, AUTH, { check: "sign_in", outcome });
    expect(delta("invalid_credentials")).toBe(1);
    expect(delta("ok")).toBe(1);
  });

  it("counts a sign-in refused by the rate limiter as rate_limited", async () => {
    await app.signUp("limited@example.com");
    // A client address of its own (through a trusted proxy), so no other test's sign-ins count.
    await app.backend.env.set("TRUSTED_PROXIES", "127.0.0.1");
    try {
      const before = await metrics();
      const statuses: number[] = [];
      for (let i = 0; i <= SIGN_IN_MAX; i++) {
        const res = await fetch(`${app.url}/api/auth/sign-in/email`, {
          method: "POST",
          headers: { origin: app.url, "content-type": "application/json", "x-forwarded-for": "203.0.113.77" },
          body: JSON.stringify({ email: "limited@example.com", password: `wrong-${i}` }),
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([...Array(SIGN_IN_MAX).fill(401), 429]);
      const after = await metrics();
      const delta = (outcome: string) =>
        sampleValue(after, AUTH, { check: "sign_in", outcome }) -
        sampleValue(before, AUTH, { check: "sign_in", outcome });
      expect(delta("invalid_credentials")).toBe(SIGN_IN_MAX);
      expect(delta("rate_limited")).toBe(1);
    } finally {
      await app.backend.env.remove("TRUSTED_PROXIES");
    }
  });

  it("counts refused tokens by reason: bad signature, unknown key, session missing or expired, banned", async () => {
    const { token, browser } = await app.signUp("tokens@example.com");
    const [header, payload, signature] = token.split(".");
    // Another canonical signature of the same length: step 1 refuses the signature.
    const i = 10;
    const flipped = signature[i] === "A" ? "B" : "A";
    const badSignature = `${header}.${payload}.${signature.slice(0, i)}${flipped}${signature.slice(i + 1)}`;
    const foreignHeader = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(header, "base64url").toString()), kid: "no-such-key" }),
    ).toString("base64url");
    const unknownKey = `${foreignHeader}.${payload}.${signature}`;

    const before = await metrics();
    const delta = (after: string, outcome: string) =>
      sampleValue(after, AUTH, { check: "token", outcome }) -
      sampleValue(before, AUTH, { check: "token", outcome });

    expect((await app.call("query", "users:me", {}, badSignature)).status).toBe(401);
    expect((await app.call("query", "users:me", {}, unknownKey)).status).toBe(401);
    let after = await metrics();
    expect(delta(after, "signature_invalid")).toBe(1);
    expect(delta(after, "unknown_key")).toBe(1);

    // Signed out: the JWT still verifies, step 2 finds no session.
    expect((await browser.post("/api/auth/sign-out", {})).status).toBe(200);
    const gone = await app.call("query", "users:me", {}, token);
    expect(gone.status).toBe(401);
    // The reason is the operator's: clients still see no data on a 401.
    expect(gone.body.data).toBeUndefined();
    after = await metrics();
    expect(delta(after, "session_missing")).toBe(1);

    const expiring = await app.signUp("expired@example.com");
    const { sessionId } = JSON.parse(Buffer.from(expiring.token.split(".")[1], "base64url").toString());
    await app.service.backend.write(async (db) => {
      await db.patch("session", sessionId, { expiresAt: Date.now() - 1000 } as any);
    });
    expect((await app.call("query", "users:me", {}, expiring.token)).status).toBe(401);
    after = await metrics();
    expect(delta(after, "session_expired")).toBe(1);

    const banned = await app.signUp("banned@example.com");
    await app.service.backend.write(async (db) => {
      await db.patch("user", banned.userId as any, { banned: true } as any);
    });
    expect((await app.call("query", "users:me", {}, banned.token)).status).toBe(403);
    after = await metrics();
    expect(delta(after, "banned")).toBe(1);
  });

  it("counts identity cache misses and hits", async () => {
    const { token } = await app.signUp("cache@example.com");
    app.backend.forgetIdentities();
    const before = await metrics();
    for (let i = 0; i < 4; i++) expect((await app.call("query", "users:me", {}, token)).status).toBe(200);
    const after = await metrics();
    const delta = (result: string) =>
      sampleValue(after, "service_auth_identity_cache_total", { result }) -
      sampleValue(before, "service_auth_identity_cache_total", { result });
    expect(delta("miss")).toBe(1);
    expect(delta("hit")).toBe(3);
  });

  it("shows live sockets and subscriptions, and re-runs per commit", async () => {
    const ws = new WebSocket(`${app.url.replace("http", "ws")}/api/sync`);
    const updates: unknown[] = [];
    ws.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.type === "connected")
        ws.send(JSON.stringify({ type: "subscribe", id: 1, path: "users:count", args: {} }));
      if (message.type === "update") updates.push(message);
    });
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(JSON.stringify({ type: "connect", v: 1 }));
    try {
      await eventually(() => expect(updates.length).toBeGreaterThan(0));
      const live = await metrics();
      expect(sampleValue(live, "service_auth_websocket_connections")).toBe(1);
      expect(sampleValue(live, "service_auth_subscriptions")).toBe(1);
      const reruns = sampleValue(live, "service_auth_reruns_per_commit_sum");
      // A sign-up changes the user count: the subscription runs again.
      await app.signUp("rerun@example.com");
      await eventually(async () =>
        expect(sampleValue(await metrics(), "service_auth_reruns_per_commit_sum")).toBeGreaterThan(reruns),
      );
    } finally {
      ws.close();
    }
    await eventually(async () =>
      expect(sampleValue(await metrics(), "service_auth_websocket_connections")).toBe(0),
    );
  });

  it("has process metrics and no user data in any label", async () => {
    const text = await metrics();
    expect(sampleValue(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^service_auth_queue_length\{queue="scrypt"\} 0$/m);
    expect(text).not.toMatch(/@example\.com/);
    expect(text).not.toMatch(/eyJ/);
  });

  it.skipIf(!promtoolInstalled)("passes promtool check metrics", async () => {
    const text = await metrics();
    // The platform's own families: parsed and linted clean.
    const own = await promtoolCheck(onlyFamilies(text, "service_auth_"));
    expect(own.output).toBe("");
    expect(own.code).toBe(0);
    // The whole scrape parses; the linter's only findings are prom-client's default gauges named
    // `nodejs_active_*_total`, whose names are prom-client's, not ours (exit code 3: lint only).
    const whole = await promtoolCheck(text);
    const findings = whole.output.split("\n").filter((line) => line !== "");
    for (const line of findings)
      expect(line).toMatch(/^nodejs_active_\w+_total non-counter metrics should not have "_total" suffix$/);
    expect(whole.code).toBe(findings.length ? 3 : 0);
  });
});
