/**
 * The watch that keeps a live connection's identity current (identity-watch.ts), driven directly
 * with a real backend: what each check reports to its connection, and when it must report nothing
 * (the token was replaced meanwhile, the watch was removed, the database could not answer).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ReadSet } from "../../src/backend/db/read-write-sets.ts";
import type { Authenticated, BackendRuntime, IdentityResolver } from "../../src/backend/runtime.ts";
import { AppError } from "../../src/backend/server.ts";
import { IdentityWatch, sameIdentity, type WatchedIdentity } from "../../src/backend/sync/identity-watch.ts";
import { Reactor, Watch } from "../../src/backend/sync/reactor.ts";
import type { WireError } from "../../src/protocol/messages.ts";
import { startTestBackend } from "../helpers/service.ts";
import { AUDIENCE, ISSUER, makeKeys, resolveIdentity, signToken, type TestKeys } from "./fixtures/auth.ts";
import * as messages from "./fixtures/messages.ts";
import schema from "./fixtures/schema.ts";

/** What a connection heard from its identity watch. */
type Heard =
  | { kind: "hold" }
  | { kind: "succeeded"; auth: Authenticated }
  | { kind: "failed"; error: WireError }
  | { kind: "unavailable" };

function connection(backend: BackendRuntime, token: string | null) {
  const heard: Heard[] = [];
  const owner: WatchedIdentity & { token: string | null } = {
    token,
    holdUpdates: () => heard.push({ kind: "hold" }),
    authSucceeded: (auth) => heard.push({ kind: "succeeded", auth }),
    authFailed: (error) => heard.push({ kind: "failed", error }),
    authUnavailable: () => heard.push({ kind: "unavailable" }),
  };
  return { owner, heard, watch: new IdentityWatch(owner, (t) => backend.authenticate(t, {})) };
}

let backend: BackendRuntime;
let keys: TestKeys;
/** Step 2 waits on this while set, so a test can act while a check is in flight. */
let gate: Promise<void> | null = null;
/** Step 2 throws this instead of resolving while set. */
let outage: AppError | null = null;
/** Called as step 2 begins. */
let enteredStep2: () => void = () => {};

beforeAll(async () => {
  keys = await makeKeys("k1");
  const gated: IdentityResolver = async (claims, ctx) => {
    enteredStep2();
    if (gate) await gate;
    if (outage) throw outage;
    return resolveIdentity(claims, ctx);
  };
  backend = await startTestBackend({
    schema,
    modules: { messages },
    auth: {
      providers: [{ issuer: ISSUER, audience: AUDIENCE, jwks: JSON.stringify({ keys: [keys.jwk] }) }],
      resolveIdentity: gated,
    },
  });
});

afterAll(async () => {
  await backend?.close();
});

// A test that failed midway must not leave step 2 held or failing for the next one.
afterEach(() => {
  gate = null;
  outage = null;
  enteredStep2 = () => {};
});

async function liveSession(): Promise<{ token: string; sessionId: string; userId: string }> {
  const userId = await backend.write((db) => db.insert("users", { name: "a", banned: false }));
  const sessionId = await backend.write((db) =>
    db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
  );
  return { token: await signToken(keys, { sub: userId, sessionId }), sessionId, userId };
}

/** Holds step 2 until the returned function is called. */
function holdStep2(): () => void {
  let open: () => void = () => {};
  gate = new Promise<void>((resolve) => (open = resolve));
  return () => {
    gate = null;
    open();
  };
}

describe("IdentityWatch", () => {
  it("watches nothing and reports nothing without a token", async () => {
    const { watch, heard } = connection(backend, null);
    const readSet = await watch.execute();
    expect(readSet).toEqual({ ids: [], ranges: [] });
    watch.onSettled();
    expect(heard).toEqual([]);
  });

  it("a passed check watches the session and user, and reports once it settled", async () => {
    const { token, sessionId, userId } = await liveSession();
    const { watch, heard } = connection(backend, token);
    const readSet = await watch.execute();
    expect(readSet.ids.map((read) => read.id)).toEqual(expect.arrayContaining([sessionId, userId]));
    expect(heard).toEqual([]); // not before the run settled
    watch.onSettled();
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatchObject({ kind: "succeeded", auth: { identity: { subject: userId, sessionId } } });
    watch.onSettled();
    expect(heard).toHaveLength(1); // reported once
  });

  it("a check invalidated before it settled reports only the hold", async () => {
    const { token } = await liveSession();
    const { watch, heard } = connection(backend, token);
    await watch.execute();
    watch.onInvalidated();
    watch.onSettled();
    expect(heard).toEqual([{ kind: "hold" }]);
  });

  it("a failed check reports the typed error at once and watches nothing", async () => {
    const { token, sessionId } = await liveSession();
    await backend.write((db) => db.delete(sessionId));
    const { watch, heard } = connection(backend, token);
    const readSet = await watch.execute();
    expect(readSet).toEqual({ ids: [], ranges: [] });
    expect(heard).toEqual([{ kind: "failed", error: expect.objectContaining({ code: "UNAUTHORIZED" }) }]);
    watch.onSettled();
    expect(heard).toHaveLength(1);
  });

  it("a database outage is reported as unavailable, neither a pass nor a refusal", async () => {
    const { token } = await liveSession();
    const { watch, heard } = connection(backend, token);
    outage = new AppError("DATABASE_UNAVAILABLE", "down");
    try {
      const readSet = await watch.execute();
      expect(readSet).toEqual({ ids: [], ranges: [] });
    } finally {
      outage = null;
    }
    watch.onSettled();
    expect(heard).toEqual([{ kind: "unavailable" }]);
  });

  it.each([
    ["passed", () => null],
    ["failed", (sessionId: string) => backend.write((db) => db.delete(sessionId))],
    ["unavailable", () => (outage = new AppError("DATABASE_BUSY", "busy"))],
  ])("a %s check of a token replaced meanwhile reports nothing", async (_name, outcome) => {
    const { token, sessionId } = await liveSession();
    const { watch, heard, owner } = connection(backend, token);
    const open = holdStep2();
    const running = watch.execute();
    owner.token = (await liveSession()).token;
    await outcome(sessionId);
    open();
    try {
      await running;
    } finally {
      outage = null;
    }
    watch.onSettled();
    expect(heard).toEqual([]);
  });

  it.each([
    ["passed", () => null],
    ["failed", (sessionId: string) => backend.write((db) => db.delete(sessionId))],
    ["unavailable", () => (outage = new AppError("DATABASE_BUSY", "busy"))],
  ])("a %s check of a removed watch reports nothing", async (_name, outcome) => {
    const { token, sessionId } = await liveSession();
    const { watch, heard } = connection(backend, token);
    const open = holdStep2();
    const running = watch.execute();
    watch.removed = true;
    await outcome(sessionId);
    open();
    try {
      await running;
    } finally {
      outage = null;
    }
    watch.onSettled();
    expect(heard).toEqual([]);
  });
});

describe("IdentityWatch in the reactor", () => {
  /** A watch that reads nothing and runs until released. */
  class Blocker extends Watch {
    readonly priority = false;
    runs = 0;
    release: () => void = () => {};
    private began: () => void = () => {};
    readonly started = new Promise<void>((resolve) => (this.began = resolve));
    execute(): Promise<ReadSet> {
      this.runs++;
      this.began();
      return new Promise((resolve) => {
        this.release = () => resolve({ ids: [], ranges: [] });
      });
    }
  }

  it("an identity check jumps the queue of query re-runs", async () => {
    const { token } = await liveSession();
    const reactor = new Reactor(backend.catalog, backend.commits, { concurrency: 1 });
    const busy = new Blocker();
    reactor.add(busy); // takes the only slot
    const queued = new Blocker();
    reactor.add(queued);
    const { watch, heard } = connection(backend, token);
    reactor.add(watch);
    const open = holdStep2();
    const inStep2 = new Promise<void>((resolve) => (enteredStep2 = resolve));
    busy.release();
    // Whichever starts first: the identity check (added last) must.
    await Promise.race([inStep2, queued.started]);
    expect(queued.runs).toBe(0);
    open();
    await reactor.whenFresh(watch, backend.lastSequence);
    expect(heard).toContainEqual(expect.objectContaining({ kind: "succeeded" }));
    queued.release();
  });

  it("a revocation committed while a check is in flight holds the connection's updates at once", async () => {
    const { token, sessionId } = await liveSession();
    const reactor = new Reactor(backend.catalog, backend.commits);
    const off = backend.onCommit((commit) => reactor.handleCommit(commit));
    try {
      const { watch, heard } = connection(backend, token);
      reactor.add(watch);
      await reactor.whenFresh(watch, backend.lastSequence); // first check passed: its reads are known
      heard.length = 0;
      const open = holdStep2();
      backend.forgetIdentities();
      reactor.invalidate(watch); // a re-check, now waiting in step 2
      heard.length = 0;
      await backend.write((db) => db.delete(sessionId));
      expect(heard).toEqual([{ kind: "hold" }]); // before the check in flight finished
      open();
      await reactor.whenFresh(watch, backend.lastSequence);
      expect(heard.at(-1)).toMatchObject({ kind: "failed", error: { code: "UNAUTHORIZED" } });
    } finally {
      off();
    }
  });
});

describe("sameIdentity", () => {
  const base = { subject: "u", issuer: "i", tokenIdentifier: "i|u", name: "A", roles: ["x"] };

  it("ignores the claims every refresh changes", () => {
    expect(sameIdentity(base, { ...base, exp: 2, iat: 2, nbf: 2, jti: "b" })).toBe(true);
    expect(sameIdentity({ ...base, exp: 1, jti: "a" }, { ...base, exp: 2, jti: "b" })).toBe(true);
  });

  it("compares every other claim by value, in both directions", () => {
    expect(sameIdentity(base, { ...base, roles: ["x"] })).toBe(true);
    expect(sameIdentity(base, { ...base, roles: ["y"] })).toBe(false);
    expect(sameIdentity(base, { ...base, name: "B" })).toBe(false);
    expect(sameIdentity(base, { ...base, extra: 1 })).toBe(false);
    expect(sameIdentity({ ...base, extra: 1 }, base)).toBe(false);
  });

  it("null is the same only as null", () => {
    expect(sameIdentity(null, null)).toBe(true);
    expect(sameIdentity(base, null)).toBe(false);
    expect(sameIdentity(null, base)).toBe(false);
    expect(sameIdentity(base, base)).toBe(true);
  });
});
