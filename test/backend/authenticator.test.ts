/**
 * The authenticator (steps 1+2 and the per-token identity cache), through the backend's entry
 * points: the WebSocket's `authenticate` and a function call carrying a token.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BackendRuntime, type IdentityResolver } from "../../src/backend/runtime.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { startTestBackend } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
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

/** One key pair for every test: making a 2048-bit pair takes ~0.4 s. */
let keys: TestKeys;
beforeAll(async () => {
  keys = await makeKeys("k1");
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A JWKS endpoint whose first answer waits until `open()`; `requested` resolves when it is asked. */
async function gatedJwksServer() {
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

/**
 * Waits for `condition`, failing at once if `call` settles first: a broken authenticator that
 * skips the awaited step fails the test instead of leaving it waiting for its timeout.
 */
async function firstOf(condition: Promise<void>, call: Promise<unknown>, never: string): Promise<void> {
  const settled = call.then(
    () => Promise.reject(new Error(never)),
    (e: unknown) => Promise.reject(e),
  );
  settled.catch(() => {}); // the call's own outcome is awaited by the test
  await Promise.race([condition, settled]);
}

/** A backend whose step 2 counts its runs, with one user and one live session. */
async function backendWith(providers: { jwksUrl?: string; jwks?: string }, engine?: SqliteEngine) {
  let step2Runs = 0;
  const counting: IdentityResolver = async (claims, ctx) => {
    step2Runs++;
    return resolveIdentity(claims, ctx);
  };
  const options = {
    schema,
    modules: { messages },
    auth: { providers: [{ issuer: ISSUER, audience: AUDIENCE, ...providers }], resolveIdentity: counting },
  };
  const backend = engine ? new BackendRuntime({ ...options, engine }) : await startTestBackend(options);
  if (engine) await backend.start();
  closers.push(() => backend.close());
  const userId = await backend.write((db) => db.insert("users", { name: "a", banned: false }));
  const sessionId = await backend.write((db) =>
    db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
  );
  return { backend, userId, sessionId, step2Runs: () => step2Runs };
}

const entryPoints: [string, (backend: BackendRuntime, token: string) => Promise<unknown>][] = [
  ["authenticate (WebSocket, actions)", (backend, token) => backend.authenticate(token)],
  ["a function call with a token", (backend, token) => backend.runQuery("messages:whoami", {}, { token })],
];

describe("authenticator", () => {
  it.each(entryPoints)(
    "%s: a commit to what step 2 reads, landing during step 1, keeps the result out of the cache",
    async (_name, call) => {
      const jwks = await gatedJwksServer();
      const { backend, userId, sessionId, step2Runs } = await backendWith({ jwksUrl: jwks.url });
      const token = await signToken(keys, { sub: userId, sessionId });

      const inFlight = call(backend, token);
      await firstOf(jwks.requested, inFlight, "step 1 never asked for the key set"); // step 1 is waiting for it
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
    const { backend, userId, sessionId } = await backendWith({ jwks: JSON.stringify({ keys: [keys.jwk] }) });
    const token = await signToken(keys, { sub: userId, sessionId });
    await backend.authenticate(token); // cached

    const heard: Promise<unknown>[] = [];
    backend.onCommit(() => heard.push(backend.authenticate(token)));
    await backend.write((db) => db.delete(sessionId));
    expect(heard).toHaveLength(1);
    await expect(heard[0]).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("maps a refused token to UNAUTHORIZED with the verifier's reason, and reports the token's exp", async () => {
    const { backend, userId, sessionId } = await backendWith({ jwks: JSON.stringify({ keys: [keys.jwk] }) });
    await expect(backend.authenticate("not-a-token")).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "Malformed token",
      data: { reason: "TOKEN_MALFORMED" },
    });
    const token = await signToken(keys, { sub: userId, sessionId });
    const exp = JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString()).exp;
    expect((await backend.authenticate(token)).expiresAt).toBe(exp);
    expect((await backend.authenticate(token)).expiresAt).toBe(exp); // from the cache too
  });

  it("a failing key source is the server's failure, not a refused token", async () => {
    const backend = await startTestBackend({
      schema,
      modules: { messages },
      auth: {
        providers: [
          {
            issuer: ISSUER,
            audience: AUDIENCE,
            getJwks: () => {
              throw new Error("key store unreadable");
            },
          },
        ],
      },
    });
    closers.push(() => backend.close());
    const failure = await backend.authenticate(await signToken(keys, { sub: "u", sessionId: "s" })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toHaveProperty("code", "UNAUTHORIZED");
    expect((failure as Error).message).toBe("key store unreadable");
  });

  it("forgetIdentities makes the next request run step 2 again", async () => {
    const { backend, userId, sessionId, step2Runs } = await backendWith({
      jwks: JSON.stringify({ keys: [keys.jwk] }),
    });
    const token = await signToken(keys, { sub: userId, sessionId });
    await backend.authenticate(token);
    await backend.authenticate(token);
    expect(step2Runs()).toBe(1);
    backend.forgetIdentities();
    await backend.authenticate(token);
    expect(step2Runs()).toBe(2);
  });

  it("refuses every token while no provider is configured", async () => {
    const token = await signToken(keys, { sub: "u", sessionId: "s" });
    for (const auth of [undefined, { providers: [] }]) {
      const backend = await startTestBackend({ schema, modules: { messages }, auth });
      closers.push(() => backend.close());
      await expect(backend.authenticate(token)).rejects.toMatchObject({
        code: "UNAUTHORIZED",
        message: "Authentication is not configured",
      });
    }
  });

  it("without a resolver, the identity is the verified claims", async () => {
    const backend = await startTestBackend({
      schema,
      modules: { messages },
      auth: {
        providers: [{ issuer: ISSUER, audience: AUDIENCE, jwks: JSON.stringify({ keys: [keys.jwk] }) }],
      },
    });
    closers.push(() => backend.close());
    const { identity } = await backend.authenticate(await signToken(keys, { sub: "user-7", sessionId: "s" }));
    expect(identity).toMatchObject({
      subject: "user-7",
      issuer: ISSUER,
      tokenIdentifier: `${ISSUER}|user-7`,
      sessionId: "s",
      aud: AUDIENCE,
    });
    const noSub = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime("15m")
      .sign(keys.privateKey);
    expect((await backend.authenticate(noSub)).identity).toMatchObject({
      subject: "",
      tokenIdentifier: `${ISSUER}|`,
    });
  });
});

/**
 * A SQLite engine that hears other instances' commits only when asked to catch up, as PostgreSQL's
 * commit follower does (`syncExternalCommits`); its own polling is off, so nothing else delivers them.
 */
class CatchingUpEngine extends SqliteEngine {
  private readonly external = new Set<(payload?: string) => void>();
  /** Another instance committed since the last catch-up. */
  behind = false;
  /** Catch-ups asked for. */
  syncs = 0;

  constructor(readonly filename: string) {
    super({ filename, pollIntervalMs: 3_600_000 });
  }

  override onExternalCommit(listener: (payload?: string) => void): () => void {
    this.external.add(listener);
    const off = super.onExternalCommit(listener);
    return () => {
      this.external.delete(listener);
      off();
    };
  }

  syncExternalCommits(): Promise<void> | undefined {
    this.syncs++;
    if (!this.behind) return undefined;
    this.behind = false;
    // An unknown write set, as from a commit notification without one: everything is re-checked.
    return Promise.resolve().then(() => {
      for (const listener of this.external) listener();
    });
  }
}

describe("authenticator with other instances on the same database", () => {
  it.each(entryPoints)(
    "%s: a session revoked on another instance is refused on the very next request",
    async (_name, call) => {
      const engine = new CatchingUpEngine(tempDatabaseFile());
      const here = await backendWith({ jwks: JSON.stringify({ keys: [keys.jwk] }) }, engine);
      const token = await signToken(keys, { sub: here.userId, sessionId: here.sessionId });
      await call(here.backend, token);
      // A miss reads a snapshot of its own, which already holds every commit: no catch-up.
      expect(engine.syncs).toBe(0);
      await call(here.backend, token);
      expect(engine.syncs).toBe(1);
      expect(here.step2Runs()).toBe(1); // cached, and nothing to catch up with

      const elsewhere = await startTestBackend({ schema, modules: { messages }, filename: engine.filename });
      closers.push(() => elsewhere.close());
      await elsewhere.write((db) => db.delete(here.sessionId));
      engine.behind = true;

      await expect(call(here.backend, token)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      expect(here.step2Runs()).toBe(2);
    },
  );

  it("a function call answers as the token's user: uncached, cached, and re-checked after catching up", async () => {
    const engine = new CatchingUpEngine(tempDatabaseFile());
    const here = await backendWith({ jwks: JSON.stringify({ keys: [keys.jwk] }) }, engine);
    const token = await signToken(keys, { sub: here.userId, sessionId: here.sessionId });
    const whoami = async () => (await here.backend.runQuery("messages:whoami", {}, { token })).value;
    expect(await whoami()).toBe(here.userId);
    expect(await whoami()).toBe(here.userId);
    expect(here.step2Runs()).toBe(1);

    // Another instance committed something unrelated: caught up, the cached entry is re-checked.
    engine.behind = true;
    expect(await whoami()).toBe(here.userId);
    expect(here.step2Runs()).toBe(2);
  });
});
