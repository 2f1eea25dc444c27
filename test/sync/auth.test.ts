/** Authentication on live connections: steps 1+2 at connect, then revocation, ban and expiry pushes. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/wait.ts";
import { makeKeys, signToken } from "./fixtures/auth.ts";
import { RawSocket, type SyncApp, startSyncApp } from "./fixtures/harness.ts";

let app: SyncApp;
beforeAll(async () => {
  app = await startSyncApp();
});
afterAll(() => app?.close());

async function connectAs(token: string): Promise<RawSocket> {
  const s = await RawSocket.open(app.wsUrl);
  s.send({ type: "connect", v: 1, token });
  const connected = await s.next((m) => m.type === "connected");
  expect(connected.authenticated).toBe(true);
  return s;
}

async function subscribeWhoami(s: RawSocket, id: number | string = "me"): Promise<unknown> {
  s.send({ type: "subscribe", id, path: "messages:whoami", args: {} });
  return (await s.next((m) => m.type === "update" && m.id === id)).value;
}

/** The connection is stopped: its subscriptions get no more pushes and new requests are refused. */
async function expectStopped(s: RawSocket, code: string): Promise<void> {
  s.send({ type: "subscribe", id: "after", path: "messages:byChannel", args: { channel: "z" } });
  expect(await s.next((m) => m.id === "after")).toMatchObject({ type: "error", id: "after", code });
  s.send({ type: "query", id: "q", path: "messages:whoami", args: {} });
  expect(await s.next((m) => m.id === "q")).toMatchObject({ type: "result", error: { code } });
}

describe("connect", () => {
  it("authenticates with the token of the connect message", async () => {
    const alice = await app.signIn("alice");
    const s = await connectAs(alice.token);
    expect(await subscribeWhoami(s)).toBe(alice.userId);
    s.close();
  });

  it("answers a bad token with connected(false) and a typed auth error", async () => {
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "connect", v: 1, token: "not.a.jwt" });
    expect(await s.next()).toMatchObject({ type: "connected", v: 1, authenticated: false });
    expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
    await expectStopped(s, "UNAUTHORIZED");
    s.close();
  });

  it("refuses a token signed by an unknown key", async () => {
    const stranger = await makeKeys("k1");
    const alice = await app.signIn("alice-2");
    const forged = await signToken(stranger, { sub: alice.userId, sessionId: alice.sessionId });
    const s = await RawSocket.open(app.wsUrl);
    s.send({ type: "connect", v: 1, token: forged });
    await s.next((m) => m.type === "connected");
    expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
    s.close();
  });

  it("keeps results of different users apart", async () => {
    const [a, b] = [await app.signIn("a"), await app.signIn("b")];
    const [sa, sb, anon] = [
      await connectAs(a.token),
      await connectAs(b.token),
      await RawSocket.connect(app.wsUrl),
    ];
    expect(await subscribeWhoami(sa)).toBe(a.userId);
    expect(await subscribeWhoami(sb)).toBe(b.userId);
    expect(await subscribeWhoami(anon)).toBe(null);
    for (const s of [sa, sb, anon]) s.close();
  });

  it("moves live queries to the new identity on re-authentication", async () => {
    const [a, b] = [await app.signIn("c"), await app.signIn("d")];
    const s = await connectAs(a.token);
    expect(await subscribeWhoami(s)).toBe(a.userId);
    s.send({ type: "authenticate", token: b.token });
    expect(await s.next((m) => m.type === "authenticated")).toEqual({
      type: "authenticated",
      authenticated: true,
    });
    expect((await s.next((m) => m.type === "update")).value).toBe(b.userId);
    s.send({ type: "authenticate", token: null });
    expect(await s.next((m) => m.type === "authenticated")).toEqual({
      type: "authenticated",
      authenticated: false,
    });
    expect((await s.next((m) => m.type === "update")).value).toBe(null);
    s.close();
  });

  it("moves only the re-authenticated connection: another one sharing its live query keeps the old identity", async () => {
    const [a, b] = [await app.signIn("shared-a"), await app.signIn("shared-b")];
    const [moving, staying] = [await connectAs(a.token), await connectAs(a.token)];
    expect(await subscribeWhoami(moving)).toBe(a.userId);
    expect(await subscribeWhoami(staying)).toBe(a.userId); // one query group for both
    staying.send({
      type: "subscribe",
      id: "barrier",
      path: "messages:byChannel",
      args: { channel: "shared" },
    });
    expect((await staying.next((m) => m.id === "barrier")).value).toEqual([]);

    moving.send({ type: "authenticate", token: b.token });
    expect((await moving.next((m) => m.type === "update" && m.id === "me")).value).toBe(b.userId);
    // Whatever the move pushed to the group went out with that update; the update of a later
    // commit reaches `staying` after it.
    await app.service.backend.runMutation("messages:post", { channel: "shared", body: "barrier" });
    expect((await staying.next((m) => m.id === "barrier")).value).toHaveLength(1);
    expect(staying.pending()).toEqual([]);
    staying.send({ type: "query", id: "now", path: "messages:whoami", args: {} });
    expect(await staying.next((m) => m.id === "now")).toEqual({ type: "result", id: "now", value: a.userId });
    for (const s of [moving, staying]) s.close();
  });

  it("a closed connection leaves neither its query nor its identity watch in the reactor", async () => {
    // Its own service: the other tests' connections may still be closing.
    const own = await startSyncApp();
    try {
      const { reactor } = own.sync;
      expect(reactor.size).toBe(0);
      const me = await own.signIn("leaving");
      const s = await RawSocket.open(own.wsUrl);
      s.send({ type: "connect", v: 1, token: me.token });
      expect(await s.next((m) => m.type === "connected")).toMatchObject({ authenticated: true });
      s.send({ type: "subscribe", id: "me", path: "messages:whoami", args: {} });
      expect(await s.next((m) => m.id === "me")).toMatchObject({ type: "update" });
      expect(reactor.size).toBe(2); // the query group and the identity watch
      // Re-authenticating with a fresh token of the same session keeps that one watch.
      s.send({ type: "authenticate", token: await me.newToken() });
      expect(await s.next((m) => m.type === "authenticated")).toMatchObject({ authenticated: true });
      expect(reactor.size).toBe(2);
      s.close();
      await eventually(() => expect(reactor.size).toBe(0));
    } finally {
      await own.close();
    }
  });
});

describe("live identity", () => {
  it("pushes UNAUTHORIZED and stops queries when the session is deleted", async () => {
    const alice = await app.signIn("revoked");
    const s = await connectAs(alice.token);
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "rev" } });
    await s.next((m) => m.type === "update");
    await app.service.backend.write((db) => db.delete("sessions", alice.sessionId));
    expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
    await app.service.backend.runMutation("messages:post", { channel: "rev", body: "secret" });
    await expectStopped(s, "UNAUTHORIZED");
    expect(s.pending().filter((m) => m.type === "update")).toEqual([]);
    s.close();
  });

  it("pushes ACCOUNT_BANNED when the user is banned", async () => {
    const bob = await app.signIn("bob");
    const s = await connectAs(bob.token);
    await subscribeWhoami(s);
    await app.service.backend.write((db) => db.patch("users", bob.userId, { banned: true }));
    expect(await s.next()).toMatchObject({
      type: "auth_error",
      code: "ACCOUNT_BANNED",
      message: "This account is banned",
    });
    await expectStopped(s, "ACCOUNT_BANNED");
    s.close();
  });

  it("re-runs live queries with the identity's new fields when the user row changes", async () => {
    const erin = await app.signIn("erin");
    const s = await connectAs(erin.token);
    s.send({ type: "subscribe", id: "name", path: "messages:myName", args: {} });
    expect((await s.next((m) => m.id === "name")).value).toBe("erin");
    await app.service.backend.write((db) => db.patch("users", erin.userId, { name: "erin2" }));
    expect(await s.next((m) => m.id === "name")).toEqual({ type: "update", id: "name", value: "erin2" });
    s.close();
  });

  it("answers a subscribe sent right after an authenticate as the new identity only", async () => {
    const [frank, gina] = [await app.signIn("frank"), await app.signIn("gina")];
    const s = await connectAs(frank.token);
    s.send({ type: "authenticate", token: gina.token });
    s.send({ type: "subscribe", id: "name", path: "messages:myName", args: {} });
    expect(await s.next((m) => m.id === "name")).toEqual({ type: "update", id: "name", value: "gina" });
    // A barrier: whatever the subscribe produced arrived before this answer.
    s.send({ type: "query", id: "q", path: "messages:whoami", args: {} });
    expect(await s.next((m) => m.id === "q")).toEqual({ type: "result", id: "q", value: gina.userId });
    expect(s.pending().filter((m) => m.id === "name")).toEqual([]);
    s.close();
  });

  it("answers a mutation that renames its caller after the live query shows the new name", async () => {
    const hank = await app.signIn("hank");
    const s = await connectAs(hank.token);
    s.send({ type: "subscribe", id: "name", path: "messages:myName", args: {} });
    expect((await s.next((m) => m.id === "name")).value).toBe("hank");
    s.send({ type: "mutation", id: "m", path: "messages:renameMe", args: { name: "hank2" } });
    expect(await s.next()).toEqual({ type: "update", id: "name", value: "hank2" });
    expect(await s.next()).toEqual({ type: "result", id: "m", value: "hank2" });
    s.close();
  });

  it("answers a mutation that ends its caller's session after the auth error", async () => {
    const ivy = await app.signIn("ivy");
    const s = await connectAs(ivy.token);
    await subscribeWhoami(s);
    s.send({ type: "mutation", id: "m", path: "messages:endMySession", args: {} });
    expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
    expect(await s.next()).toEqual({ type: "result", id: "m", value: null });
    s.close();
  });

  it("is not disturbed by writes to other users and sessions", async () => {
    const [carol, dave] = [await app.signIn("carol"), await app.signIn("dave")];
    const s = await connectAs(carol.token);
    await subscribeWhoami(s);
    await app.service.backend.write((db) => db.delete("sessions", dave.sessionId));
    await app.service.backend.write((db) => db.patch("users", dave.userId, { banned: true }));
    s.send({ type: "query", id: "q", path: "messages:whoami", args: {} });
    expect(await s.next((m) => m.id === "q")).toEqual({ type: "result", id: "q", value: carol.userId });
    expect(s.pending()).toEqual([]);
    s.close();
  });

  it("ends the identity when the session expires", async () => {
    const erin = await app.signIn("erin", { sessionTtlMs: 1200 });
    const s = await connectAs(erin.token);
    await subscribeWhoami(s);
    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({ code: "UNAUTHORIZED" });
    s.close();
  });

  it("enforces the token's exp on the live connection", async () => {
    const frank = await app.signIn("frank", { tokenTtlSeconds: 1 });
    const s = await connectAs(frank.token);
    await subscribeWhoami(s);
    // Expired from exp + leeway on, the same rule as HTTP verification.
    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({
      code: "UNAUTHORIZED",
      message: "Token expired",
    });
    // A fresh token for the still-valid session restores the connection.
    s.send({ type: "authenticate", token: await frank.newToken(900) });
    expect(await s.next((m) => m.type === "authenticated")).toMatchObject({ authenticated: true });
    expect(await subscribeWhoami(s, "again")).toBe(frank.userId);
    s.close();
  });

  it("ends the identity of a token whose key is retired when the env store changes", async () => {
    // An anonymous connection, opened first, has no identity to re-check and must not stop the round.
    const anon = await RawSocket.connect(app.wsUrl);
    const hank = await app.signIn("hank");
    const s = await connectAs(hank.token);
    expect(await subscribeWhoami(s)).toBe(hank.userId);
    const old = app.keyState.keys;
    app.keyState.keys = [await makeKeys("k3")];
    try {
      // No commit touches the identity: the env change alone re-checks it with the rebuilt verifier.
      await app.service.backend.env.set("SYNC_TEST_ROTATION", String(Date.now()));
      expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
      await expectStopped(s, "UNAUTHORIZED");
      expect(await subscribeWhoami(anon)).toBe(null);
    } finally {
      app.keyState.keys = old;
    }
    for (const c of [s, anon]) c.close();
  });

  it("re-authenticates with a token of a rotated key after an auth error", async () => {
    const gina = await app.signIn("gina");
    const s = await connectAs(gina.token);
    await subscribeWhoami(s);
    const old = app.keyState.keys;
    app.keyState.keys = [await makeKeys("k2")];
    try {
      // Any change to the session makes the server re-check the identity, with the new key set.
      await app.service.backend.write((db) =>
        db.patch("sessions", gina.sessionId, { touchedAt: Date.now() }),
      );
      expect(await s.next()).toMatchObject({ type: "auth_error", code: "UNAUTHORIZED" });
      s.send({ type: "authenticate", token: await gina.newToken() });
      expect(await s.next((m) => m.type === "authenticated")).toMatchObject({ authenticated: true });
      expect(await subscribeWhoami(s, 2)).toBe(gina.userId);
      // One answer to the one authenticate: nothing of the ended authentication is answered again.
      expect(s.pending()).toEqual([]);
    } finally {
      app.keyState.keys = old;
    }
    s.close();
  });
});
