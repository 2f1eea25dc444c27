/**
 * Traces with a real OpenTelemetry SDK (sdk-trace-base, spans kept in its in-memory exporter and
 * the W3C Trace Context propagator): an HTTP query with a bearer token and a `traceparent` header
 * gives a span whose parent is the caller's span, with children for step 1 (JWT verification),
 * step 2 (identity resolution) and the database transaction; a Better Auth route gets its own span.
 */
import { propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { postJson } from "../helpers/http.ts";
import { eventually } from "../helpers/wait.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

describe("traces", () => {
  const exporter = new InMemorySpanExporter();
  let app: ExampleApp;

  beforeAll(async () => {
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    app = await startExampleApp();
  });
  afterAll(async () => {
    await app?.close();
    trace.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  const spans = () => exporter.getFinishedSpans();
  const named = (name: string): ReadableSpan => {
    const found = spans().filter((s) => s.name === name);
    expect(found.map((s) => s.name)).toEqual([name]);
    return found[0];
  };

  it("traces an HTTP query under the caller's traceparent, with step 1, step 2 and the transaction", async () => {
    const { token } = await app.signUp("traced@example.com");
    // Uncached: steps 1 and 2 run for this call.
    app.backend.forgetIdentities();
    exporter.reset();
    const res = await postJson(
      `${app.url}/api/query`,
      { path: "users:me", args: {} },
      { authorization: `Bearer ${token}`, traceparent: TRACEPARENT },
    );
    expect(res.status).toBe(200);
    const call = await eventually(() => named("query users:me"));
    expect(call.spanContext().traceId).toBe(TRACE_ID);
    expect(call.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(call.parentSpanContext?.isRemote).toBe(true);
    expect(call.attributes["service_auth.function"]).toBe("users:me");

    const callId = call.spanContext().spanId;
    for (const child of ["auth.verify_token", "auth.resolve_identity", "db.transaction read"]) {
      const span = named(child);
      expect(span.spanContext().traceId).toBe(TRACE_ID);
      expect(span.parentSpanContext?.spanId).toBe(callId);
      // Children lie within their call.
      expect(span.startTime[0] * 1e9 + span.startTime[1]).toBeGreaterThanOrEqual(
        call.startTime[0] * 1e9 + call.startTime[1],
      );
    }
    // Nothing of the token or the user's email in any attribute.
    const attributes = JSON.stringify(spans().map((s) => s.attributes));
    expect(attributes).not.toContain(token.slice(0, 20));
    expect(attributes).not.toContain("traced@example.com");
  });

  it("marks a refused call's span with the error code, step 1 included", async () => {
    const res = await postJson(
      `${app.url}/api/query`,
      { path: "users:me", args: {} },
      { authorization: "Bearer not.a.jwt", traceparent: TRACEPARENT },
    );
    expect(res.status).toBe(401);
    const call = await eventually(() => named("query users:me"));
    expect(call.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(call.attributes["service_auth.error_code"]).toBe("UNAUTHORIZED");
    const verify = named("auth.verify_token");
    expect(verify.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    expect(verify.status.code).toBe(2);
  });

  it("starts a trace of its own without a traceparent, and skips step spans on a cache hit", async () => {
    const { token } = await app.signUp("cached@example.com");
    // The sign-up's token check is not cached yet; the first call caches it.
    expect((await app.call("query", "users:me", {}, token)).status).toBe(200);
    exporter.reset();
    expect((await app.call("query", "users:me", {}, token)).status).toBe(200);
    const call = await eventually(() => named("query users:me"));
    expect(call.parentSpanContext).toBeUndefined();
    expect(call.attributes["service_auth.identity_cache"]).toBe("hit");
    expect(spans().map((s) => s.name)).not.toContain("auth.verify_token");
    expect(named("db.transaction read").parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  });

  it("traces a Better Auth route under the caller's traceparent", async () => {
    await app.signUp("route@example.com");
    exporter.reset();
    const res = await fetch(`${app.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: app.url, traceparent: TRACEPARENT },
      body: JSON.stringify({ email: "route@example.com", password: PASSWORD }),
    });
    expect(res.status).toBe(200);
    const route = await eventually(() => named("auth POST /sign-in/email"));
    expect(route.spanContext().traceId).toBe(TRACE_ID);
    expect(route.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(route.attributes["http.response.status_code"]).toBe(200);
    expect(route.attributes["url.path"]).toBe("/api/auth/sign-in/email");
  });

  it("traces a WebSocket call with its transaction", async () => {
    const { token } = await app.signUp("socket@example.com");
    const ws = new WebSocket(`${app.url.replace("http", "ws")}/api/sync`);
    const results: any[] = [];
    ws.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.type === "connected")
        ws.send(JSON.stringify({ type: "query", id: 7, path: "users:me", args: {} }));
      if (message.type === "result") results.push(message);
    });
    await new Promise((resolve) => ws.once("open", resolve));
    exporter.reset();
    ws.send(JSON.stringify({ type: "connect", v: 1, token }));
    try {
      await eventually(() => expect(results).toHaveLength(1));
      expect(results[0].value.email).toBe("socket@example.com");
      const call = await eventually(() => named("query users:me"));
      expect(call.attributes["service_auth.transport"]).toBe("ws");
      expect(named("db.transaction read").parentSpanContext?.spanId).toBe(call.spanContext().spanId);
    } finally {
      ws.close();
    }
  });

  it("traces mutations with a write transaction", async () => {
    const { token } = await app.signUp("writer@example.com");
    exporter.reset();
    const res = await postJson(
      `${app.url}/api/mutation`,
      { path: "messages:send", args: { body: "traced" } },
      { authorization: `Bearer ${token}`, traceparent: TRACEPARENT },
    );
    expect(res.status).toBe(200);
    const call = await eventually(() => named("mutation messages:send"));
    expect(call.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(named("db.transaction write").parentSpanContext?.spanId).toBe(call.spanContext().spanId);
  });
});
