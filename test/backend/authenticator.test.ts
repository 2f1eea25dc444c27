/**
 * The authenticator (steps 1+2 and the per-token identity cache), through the backend's entry
 * points: the WebSocket's `authenticate` and a function call carrying a token.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Backend, IdentityResolver } from "../../src/backend/runtime.ts";
import { startTestBackend } from "../helpers/service.ts";
import {
  AUDIENCE,
  ISSUER,
  makeKeys,
  resolveIdentity,
  signToken,
  type TestKeys,
} from "../sync/fixtures/auth.ts";
import * as messages from "../sync/fixtures/messages.ts";
import schema from "../sync/fixtures/schema.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A JWKS endpoint whose first answer waits until `open()`; `requested` resolves when it is asked. */
async function gatedJwksServer(keys: TestKeys) {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  let asked: () => void = () => {};
  const requested = new Promise<void>((resolve) => (asked = resolve));
  const server: Server = createServer(async (_req, res) => {
    asked();
    await gate;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: [keys.jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/jwks`, open, requested };
}

/** A backend whose step 2 counts its runs, with one user and one live session. */
async function backendWith(providers: { jwksUrl?: string; jwks?: string }) {
  let step2Runs = 0;
  const counting: IdentityResolver = async (claims, ctx) => {
    step2Runs++;
    return resolveIdentity(claims, ctx);
  };
  const backend = await startTestBackend({
    schema,
    modules: { messages },
    auth: { providers: [{ issuer: ISSUER, audience: AUDIENCE, ...providers }], resolveIdentity: counting },
  });
  closers.push(() => backend.close());
  const userId = await backend.write((db) => db.insert("users", { name: "a", banned: false }));
  const sessionId = await backend.write((db) =>
    db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
  );
  return { backend, userId, sessionId, step2Runs: () => step2Runs };
}

const entryPoints: [string, (backend: Backend, token: string) => Promise<unknown>][] = [
  ["authenticate (WebSocket, actions)", (backend, token) => backend.authenticate(token)],
  ["a function call with a token", (backend, token) => backend.runQuery("messages:whoami", {}, { token })],
];

describe("authenticator", () => {
  it.each(entryPoints)(
    "%s: a commit to what step 2 reads, landing during step 1, keeps the result out of the cache",
    async (_name, call) => {
      const keys = await makeKeys("k1");
      const jwks = await gatedJwksServer(keys);
      const { backend, userId, sessionId, step2Runs } = await backendWith({ jwksUrl: jwks.url });
      const token = await signToken(keys, { sub: userId, sessionId });

      const inFlight = call(backend, token);
      await jwks.requested; // step 1 is waiting for the key set
      await backend.write((db) => db.patch(sessionId, { touchedAt: Date.now() }));
      jwks.open();
      await inFlight;
      expect(step2Runs()).toBe(1);

      await call(backend, token);
      expect(step2Runs()).toBe(2); // not served from the cache
      await call(backend, token);
      expect(step2Runs()).toBe(2); // cached now: no commit raced this one
    },
  );

  it("a commit listener hearing a revocation never gets the revoked identity from the cache", async () => {
    const keys = await makeKeys("k1");
    const { backend, userId, sessionId } = await backendWith({ jwks: JSON.stringify({ keys: [keys.jwk] }) });
    const token = await signToken(keys, { sub: userId, sessionId });
    await backend.authenticate(token); // cached

    const heard: Promise<unknown>[] = [];
    backend.onCommit(() => heard.push(backend.authenticate(token)));
    await backend.write((db) => db.delete(sessionId));
    expect(heard).toHaveLength(1);
    await expect(heard[0]).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
