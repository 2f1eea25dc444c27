/**
 * "Revocation takes effect on the next request" holds for requests over an already-open WebSocket
 * too: a socket authenticated on instance B whose session is revoked (or whose user is banned)
 * through instance A has its next call or subscribe refused, even when B has not been told — B
 * here neither listens for notifications nor polls within the test, so only the per-request
 * catch-up can make it learn of A's commit.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { callFunction } from "../helpers/http.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { RawSocket } from "../sync/fixtures/harness.ts";
import { type Instances, startInstances } from "./fixtures/instances.ts";

/** B's background poll period: longer than any run of this file, so it never fires during a test. */
const NEVER_MS = 24 * 3_600_000;

describe.skipIf(!postgresBinDir)("an open WebSocket on instance B after a revocation through A", () => {
  const server = usePostgres();
  let instances: Instances;
  const sockets: RawSocket[] = [];
  let channels = 0;

  beforeAll(async () => {
    instances = await startInstances(2, await server().createDatabase(), (i) =>
      i === 1 ? { notify: false, pollIntervalMs: NEVER_MS } : {},
    );
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });
  afterAll(async () => {
    await instances?.close();
  });

  /** A socket on B authenticated with `token`; its first query proves it runs as `userId`. */
  async function socketOnB(token: string, userId: string): Promise<RawSocket> {
    const s = await RawSocket.open(`ws://127.0.0.1:${instances.services[1].port}/api/sync`);
    sockets.push(s);
    s.send({ type: "connect", v: 1, token });
    expect(await s.next((m) => m.type === "connected")).toMatchObject({ authenticated: true });
    s.send({ type: "query", id: "before", path: "messages:whoami", args: {} });
    expect(await s.next((m) => m.type === "result" && m.id === "before")).toMatchObject({ value: userId });
    return s;
  }

  /** Sends a call on `s` and resolves with its `result`. */
  async function call(s: RawSocket, type: "query" | "mutation", id: string, path: string, args: object) {
    s.send({ type, id, path, args });
    return s.next((m) => m.type === "result" && m.id === id);
  }

  /** The bodies in `channel`, read through A (the database, not B's view of it). */
  async function bodiesIn(channel: string): Promise<string[]> {
    const r = await callFunction(instances.services[0].url, "query", "messages:byChannel", { channel });
    expect(r.status).toBe(200);
    return r.body.value;
  }

  it("refuses the next mutation after the session was deleted through A, and commits nothing", async () => {
    const { userId, sessionId, token } = await instances.newSession();
    const s = await socketOnB(token, userId);
    expect((await instances.revoke(0, sessionId)).status).toBe(200);

    const channel = `revoked-${++channels}`;
    const result = await call(s, "mutation", "m1", "messages:send", { channel, body: "after revoke" });
    expect(result.error).toMatchObject({ code: "UNAUTHORIZED" });
    expect(result.value).toBeUndefined();
    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({ code: "UNAUTHORIZED" });
    expect(await bodiesIn(channel)).toEqual([]);
  }, 60_000);

  it("refuses the next query after the session was deleted through A", async () => {
    const { userId, sessionId, token } = await instances.newSession();
    const s = await socketOnB(token, userId);
    expect((await instances.revoke(0, sessionId)).status).toBe(200);

    const result = await call(s, "query", "q1", "messages:whoami", {});
    expect(result.error).toMatchObject({ code: "UNAUTHORIZED" });
    expect(result.value).toBeUndefined();
    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({ code: "UNAUTHORIZED" });
  }, 60_000);

  it("refuses the next subscribe after the session was deleted through A", async () => {
    const { userId, sessionId, token } = await instances.newSession();
    const s = await socketOnB(token, userId);
    expect((await instances.revoke(0, sessionId)).status).toBe(200);

    s.send({ type: "subscribe", id: "s1", path: "messages:whoami", args: {} });
    const answer = await s.next((m) => m.id === "s1");
    expect(answer).toMatchObject({ type: "error", code: "UNAUTHORIZED" });
    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({ code: "UNAUTHORIZED" });
  }, 60_000);

  it("refuses the next mutation and query with ACCOUNT_BANNED after a ban through A", async () => {
    const { userId, token } = await instances.newSession();
    const s = await socketOnB(token, userId);
    expect((await instances.ban(0, userId)).status).toBe(200);

    const channel = `banned-${++channels}`;
    const mutated = await call(s, "mutation", "m1", "messages:send", { channel, body: "after ban" });
    expect(mutated.error).toMatchObject({ code: "ACCOUNT_BANNED" });
    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({ code: "ACCOUNT_BANNED" });
    const queried = await call(s, "query", "q1", "messages:whoami", {});
    expect(queried.error).toMatchObject({ code: "ACCOUNT_BANNED" });
    expect(await bodiesIn(channel)).toEqual([]);
  }, 60_000);

  it("pushes no update of the revoked identity's subscriptions once B has learnt of the revocation", async () => {
    const channel = `live-${++channels}`;
    const revoked = await instances.newSession();
    const other = await instances.newSession();
    const s = await socketOnB(revoked.token, revoked.userId);
    s.send({ type: "subscribe", id: "live", path: "messages:byChannel", args: { channel } });
    expect(await s.next((m) => m.type === "update" && m.id === "live")).toMatchObject({ value: [] });

    // Revoked first, then a post the revoked subscription would show: B hears both in that order.
    expect((await instances.revoke(0, revoked.sessionId)).status).toBe(200);
    const posted = await callFunction(instances.services[0].url, "mutation", "messages:post", {
      channel,
      body: "after revoke",
    });
    expect(posted.status).toBe(200);

    // Another user's call on B makes B catch up with both commits; it sees the post itself.
    const witness = await socketOnB(other.token, other.userId);
    witness.send({ type: "subscribe", id: "w", path: "messages:byChannel", args: { channel } });
    expect(await witness.next((m) => m.type === "update" && m.id === "w")).toMatchObject({
      value: ["after revoke"],
    });

    expect(await s.next((m) => m.type === "auth_error")).toMatchObject({ code: "UNAUTHORIZED" });
    // Messages of one socket arrive in order: after `pong`, everything sent before it is here.
    s.send({ type: "ping" });
    await s.next((m) => m.type === "pong");
    const leaked = s
      .pending()
      .filter((m) => m.type === "update" && JSON.stringify(m).includes("after revoke"));
    expect(leaked).toEqual([]);
  }, 60_000);
});
