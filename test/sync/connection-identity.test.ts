/**
 * A live connection's identity check that meets a database outage (connection-identity.ts): it is
 * neither a pass nor a refusal. The connection's updates and requests wait (a revocation may be
 * behind the outage), no auth error is sent, and the server's sweep retries the check by itself;
 * once a retry passes, what waited is delivered.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { RequestMeta } from "../../src/backend/functions/define.ts";
import type { IdentityResolver } from "../../src/backend/runtime.ts";
import { AppError } from "../../src/backend/server.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";
import { AUDIENCE, ISSUER, makeKeys, resolveIdentity, signToken, type TestKeys } from "./fixtures/auth.ts";
import { RawSocket } from "./fixtures/harness.ts";
import * as messages from "./fixtures/messages.ts";
import schema from "./fixtures/schema.ts";

let service: TestService;
let keys: TestKeys;
/** Step 2 throws this instead of resolving while set. */
let outage: AppError | null = null;
/** Step 2 runs, and the ones that met the outage. */
let checks = 0;
let failedChecks = 0;
/** The request meta each step 2 was given. */
const metas: RequestMeta[] = [];

beforeAll(async () => {
  keys = await makeKeys("k1");
  const faulty: IdentityResolver = async (claims, ctx) => {
    checks++;
    metas.push(ctx.meta);
    if (outage) {
      failedChecks++;
      throw outage;
    }
    return resolveIdentity(claims, ctx);
  };
  service = await startTestService({
    schema,
    modules: { messages },
    auth: {
      providers: [{ issuer: ISSUER, audience: AUDIENCE, jwks: JSON.stringify({ keys: [keys.jwk] }) }],
      resolveIdentity: faulty,
    },
    sync: { sweepIntervalMs: 50 },
  });
});
afterAll(() => service?.close());
afterEach(() => {
  outage = null;
});

it("holds updates and requests through an outage of the identity check, and delivers them once a retry passes", async () => {
  const userId = await service.backend.write((db) => db.insert("users", { name: "o", banned: false }));
  const sessionId = await service.backend.write((db) =>
    db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
  );
  const s = await RawSocket.open(`ws://127.0.0.1:${service.port}/api/sync`);
  s.send({ type: "connect", v: 1, token: await signToken(keys, { sub: userId, sessionId }) });
  expect(await s.next((m) => m.type === "connected")).toMatchObject({ authenticated: true });
  s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "outage" } });
  expect(await s.next((m) => m.id === 1)).toEqual({ type: "update", id: 1, value: [] });

  // A commit touching the session re-checks the identity, which meets the outage.
  outage = new AppError("DATABASE_UNAVAILABLE", "down");
  const failedBefore = failedChecks;
  await service.backend.write((db) => db.patch("sessions", sessionId, { touchedAt: Date.now() }));
  await eventually(() => expect(failedChecks).toBeGreaterThan(failedBefore));
  await service.backend.runMutation("messages:post", { channel: "outage", body: "held" });
  s.send({ type: "query", id: "q", path: "messages:whoami", args: {} });
  // The socket still answers pings, but nothing the identity gates has arrived.
  s.send({ type: "ping" });
  expect(await s.next((m) => m.type === "pong")).toEqual({ type: "pong" });
  expect(s.pending()).toEqual([]);

  // The sweep retries without another commit; the retry passes and releases what waited.
  const checksBefore = checks;
  outage = null;
  expect(await s.next((m) => m.id === "q")).toEqual({ type: "result", id: "q", value: userId });
  expect(checks).toBeGreaterThan(checksBefore);
  expect(await s.next((m) => m.id === 1)).toEqual({ type: "update", id: 1, value: ["held"] });
  expect(s.pending().filter((m) => m.type === "auth_error")).toEqual([]);
  s.close();
});

it("gives step 2 the meta of the connection's upgrade request", async () => {
  const userId = await service.backend.write((db) => db.insert("users", { name: "m", banned: false }));
  const sessionId = await service.backend.write((db) =>
    db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
  );
  metas.length = 0;
  const s = await RawSocket.open(`ws://127.0.0.1:${service.port}/api/sync`);
  s.send({ type: "connect", v: 1, token: await signToken(keys, { sub: userId, sessionId }) });
  expect(await s.next((m) => m.type === "connected")).toMatchObject({ authenticated: true });
  // The resolver may key decisions on where a request comes from, on a socket as over HTTP.
  expect(metas[0]).toEqual({ clientIp: "127.0.0.1", userAgent: undefined });
  s.close();
});
